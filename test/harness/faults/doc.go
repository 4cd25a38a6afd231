// Package faults is how tests break the control plane and mend it, as an
// outage in a cluster would: Proxy (proxy.go), a TCP proxy in front of
// the API server that a test takes down and brings back, so that clients
// see the server vanish without touching the control plane other tests
// share; and APIServer (apiserver.go), kube-apiserver's own process,
// stopped with SIGTERM by its PID and started again with the same
// command line, certificates and etcd.
//
// Tests reach both through test/harness's Env (NewProxy, StopAPIServer,
// StartAPIServer), which knows the control plane's address and files.
//
// Layer "test support" of deps_test.go, below test/harness: it imports only
// test/harness/proc of the module.
package faults
