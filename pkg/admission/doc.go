// Package admission translates compiled rules into MutatingAdmissionPolicies
// (admissionregistration.k8s.io/v1), so that the API server annotates an
// object in the request that creates or updates it, before the controller
// ever sees it.
//
// Start at Translate (admission.go): one policy and its binding per rule,
// named "<field manager>.<rule>", and one per ConfigMap it reads by name
// as the policy's params (params.go), with a Note for what only the
// controller can do; Translate's doc says how a rule's selection, values and file
// order become CEL. Manifests (manifest.go) renders them for `kubectl
// apply`; ServerNote (server.go) says when the API server serves no
// policies. Failures are ignored (failurePolicy Ignore): a policy never
// blocks a request, and the controller converges what it did not set.
//
// The policy lists the keys it set in the marker annotation
// patch.MarkerKey(field manager, resource), so that the controller counts
// them as its own (see package reconcile).
//
// Layer "decide" of deps_test.go: it imports rules and patch of this
// module, never the controller, and no client but discovery, read to note
// what the server lacks. Package policysync keeps the policies in a
// cluster; this package only computes them.
package admission
