// Package kubeflags holds kubectl's connection flags (--kubeconfig,
// --context, -n, --server, …) and builds the client configuration they
// select, as kubectl does.
//
// Start at Flags (kubeflags.go): AddFlags registers them, Validate and
// ValidateKubeconfig (kubeconfig.go) check them, and RESTConfig and
// Namespace give what they select. Reach (reach.go) asks
// the API server once, so that a command fails with an UnreachableError
// naming the server rather than with a client's retry loop.
//
// Layer "base" of deps_test.go: it is the command line's and imports no
// other package of this module; it knows nothing of rules.
package kubeflags
