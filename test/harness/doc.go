// Package harness starts a real control plane (etcd + kube-apiserver, built
// from source by `make envtest-assets`) for end-to-end tests, installs the
// Frigate CRD from deploy/crd, and hands tests the means to talk to it.
// test/e2e, test/soak, test/bench, test/demo and test/chart all build on
// it.
//
// Start at Start and StartWith (harness.go), which return an Env: its
// clients and kubeconfig, objects (objects.go: Create, Get,
// WaitForAnnotation, and Quiet, the one helper for a window in which
// nothing may be written), the API server's request counts (metrics.go)
// and its faults (restart.go: NewProxy, StopAPIServer, over
// test/harness/faults). StartController (controller.go) runs the
// controller in the test's own process; BuildBinary builds the binary
// that test/harness/proc runs as a Process.
//
// Below it, each answering one question: proc (the processes tests
// start), promtext (reading /metrics), faults (breaking the control
// plane) and kubelet (what a Pod's container is given).
//
// Layer "harness" of deps_test.go. It is test-only code: it imports
// controller-runtime's envtest, which must never reach the product binary,
// and no product package imports it.
package harness
