// Package owners measures values read from a Pod's owners ({fromOwner:
// {label: team}}): with kube-controller-manager running, so that one
// Deployment really makes a ReplicaSet and its Pods, Measure relabels the
// Deployment and counts the PATCH requests the API server serves on Pods
// (one per Pod of the Deployment, none on a control group of other
// Deployments' and bare Pods), the time and kube-annotator's CPU against
// the raw loop relabelling the same Pods, and kube-annotator's heap with
// and without owner informers and per owner cached. Result.Print writes
// the tables. Start at Measure (owners.go).
//
// Layer "bench phases" of deps_test.go: it imports test/bench/rig and
// the benchmark's parts.
package owners
