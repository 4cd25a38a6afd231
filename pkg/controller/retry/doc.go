// Package retry is the controller's retry policy: how the work queue
// spaces the syncs that failed (the rate limiter of ratelimit.go), how
// their failures are logged (FailureLog: once per resource and interval,
// not once per attempt), and how an informer's list or watch that got no
// answer from the API server is sent again (UntilAnswered). Unreachable
// tells a failure the API server answered from one it did not, Permanent
// one that no retry can fix, and Reason names the server's answer.
//
// Layer "base" of deps_test.go: it imports no other package of this
// module, so that its policy is tested without a controller.
package retry
