// Package e2e proves the controller's behaviour on a real control plane
// (etcd + kube-apiserver started by test/harness): the binary's commands,
// `run` against rules files, admission policies, pruning, sharding,
// reloads, and the fault suite (faults_*_test.go, `make test-faults`).
//
// Start at main_test.go: TestMain starts one control plane for the suite
// (env) and builds the binary (binary) that startRun (process_test.go)
// runs, a test/harness/proc Process. Tests wait for states — an
// annotation, a metric, a count of writes — with waitFor, the harness's
// WaitForAnnotation and a Process's WaitMetric, and check a window in
// which nothing may be written with env.Quiet, never with a bare sleep.
//
// Layer "test" of deps_test.go; it has no code but its tests.
package e2e
