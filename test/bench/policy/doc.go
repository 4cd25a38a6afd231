// Package policy measures annotating at creation: Measure creates
// objects one at a time while a fresh kube-annotator runs, without and
// then with its MutatingAdmissionPolicy, and Print compares how many
// create responses carried the annotation, the create→annotated latency,
// the PATCH requests per object and the create request's own latency.
//
// Layer "bench phases" of deps_test.go: it imports test/bench/rig, the
// benchmark's parts, and pkg/admission for the label of the policies it
// deletes.
package policy
