// Package proc runs the processes that tests start — the kube-annotator
// binary, kubectl, kube-controller-manager — and stops them by their own
// PID, never by name.
//
// Start at Child (child.go): a started command, its log file, how it
// exited, Stop with SIGTERM then SIGKILL. Process (process.go) is a Child
// started for a test, stopped at the test's end: StartRun runs `run` with
// its metrics and probes on free loopback ports (FreeAddr), and a test
// waits on its metrics (WaitMetric, WaitSeries) instead of sleeping.
// LogTail and ProcStatusKiB read a process's log and memory.
//
// Layer "test support" of deps_test.go, below test/harness: it imports only
// test/harness/promtext of the module.
package proc
