package testutil

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a test whose failure is recorded rather than reported.
type recorder struct {
	testing.TB
	failure string
}

func (r *recorder) Fatalf(format string, args ...any) { r.failure = fmt.Sprintf(format, args...) }

func TestConsistently(t *testing.T) {
	var polls atomic.Int32
	start := time.Now()
	r := &recorder{TB: t}
	Consistently(r, 100*time.Millisecond, "the condition", func() bool { polls.Add(1); return true })
	if took := time.Since(start); took < 100*time.Millisecond || r.failure != "" {
		t.Errorf("a condition that holds: returned after %v, failure %q; want the whole window of 100ms, no failure", took, r.failure)
	}
	if n := polls.Load(); n < 2 {
		t.Errorf("the condition was polled %d times in the window, want several", n)
	}

	polls.Store(0)
	start = time.Now()
	r = &recorder{TB: t}
	Consistently(r, time.Minute, "the condition", func() bool { return polls.Add(1) < 5 })
	if took := time.Since(start); took > 10*time.Second || r.failure != "the condition stopped holding within 1m0s" {
		t.Errorf("a condition that stops holding: returned after %v, failure %q; want at once, naming it", took, r.failure)
	}
}
