// Command crrunner is the controller-runtime baseline of kube-annotator's
// benchmark (test/bench): the annotator a Kubebuilder user would write for
// the same job. One controller per kind over unstructured.Unstructured,
// MaxConcurrentReconciles workers each, and a Reconcile that gets the
// object, compares its annotation and merge-patches it when it differs.
//
// It lives in its own Go module so that controller-runtime never enters
// kube-annotator's binary. The benchmark builds and runs it; by hand:
//
//	cd test/bench/crrunner && go build -o /tmp/crrunner . && /tmp/crrunner --kubeconfig K --workers 8
//
// Everything else is controller-runtime's defaults, apart from what the
// benchmark needs to compare like with like: no metrics or health servers,
// no leader election, and no client-side rate limiting (QPS -1).
package main
