package testutil

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// MustJSON is v encoded as JSON, for expected request bodies, fixtures and
// messages. It panics when v does not encode: test values are plain data.
func MustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// WaitFor polls cond every 10ms until it holds, and fails the test, naming
// what it waited for, when timeout passes first. It suits cheap, in-process
// conditions; tests whose conditions ask an API server poll less often.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, timeout, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// Consistently polls cond over d, the one way a test checks a window in
// which something must not happen (a write, a retry too many), and fails
// the test, naming what must hold, as soon as cond does not. It polls
// about 50 times over d, every 10ms to 200ms, so that a condition that
// asks an API server is not asked too often in a long window.
func Consistently(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	interval := min(max(d/50, 10*time.Millisecond), 200*time.Millisecond)
	err := wait.PollUntilContextTimeout(t.Context(), interval, d, true,
		func(context.Context) (bool, error) { return !cond(), nil })
	switch {
	case err == nil:
		t.Fatalf("%s stopped holding within %v", what, d)
	case t.Context().Err() != nil:
		t.Fatalf("the test ended while %s was checked", what)
	}
}
