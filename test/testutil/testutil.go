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
