package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
)

var (
	keyA, keyB, keyC = "ns/a", "ns/b", "ns/c"
	// conflict is a failure the API server answered; refused one it did
	// not answer.
	conflict = apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "a", errors.New("modified"))
	refused  = fixture.Refused
)

// limiterStep is one thing that happens to a Limiter, with what it
// should answer.
type limiterStep struct {
	// fail: failed(key, err) then When(key), which should be want.
	key  string
	err  error
	want time.Duration
	// wait moves the clock on.
	wait time.Duration
	// answer: reachable(), which should return released (in any order).
	answer   bool
	released []string
	// forget: Forget(key).
	forget bool
}

func fail(key string, err error, want time.Duration) limiterStep {
	return limiterStep{key: key, err: err, want: want}
}
func elapse(d time.Duration) limiterStep      { return limiterStep{wait: d} }
func answered(released ...string) limiterStep { return limiterStep{answer: true, released: released} }
func forgetKey(key string) limiterStep        { return limiterStep{key: key, forget: true} }
func ms(n int) time.Duration                  { return time.Duration(n) * time.Millisecond }

// sorted returns keys sorted.
func sorted(keys []string) []string {
	keys = slices.Clone(keys)
	slices.Sort(keys)
	return keys
}

func TestRetryLimiter(t *testing.T) {
	tests := []struct {
		name  string
		qps   float32
		burst int
		steps []limiterStep
		// requeues is NumRequeues of a, b and c at the end.
		requeues [3]int
	}{
		{name: "answered failures back off exponentially, per object", qps: -1, steps: []limiterStep{
			fail(keyA, conflict, ms(5)), fail(keyA, conflict, ms(10)), fail(keyA, conflict, ms(20)),
			fail(keyB, conflict, ms(5)),
			forgetKey(keyA), fail(keyA, conflict, ms(5)),
		}, requeues: [3]int{1, 1, 0}},
		{name: "the client's rate paces retries of all objects", qps: 10, burst: 1, steps: []limiterStep{
			fail(keyA, conflict, ms(5)), fail(keyB, conflict, ms(100)), fail(keyC, conflict, ms(200)),
			elapse(time.Second), fail(keyA, conflict, ms(10)),
		}, requeues: [3]int{2, 1, 1}},
		{name: "the client's burst lets retries through at once", qps: 10, burst: 2, steps: []limiterStep{
			fail(keyA, conflict, ms(5)), fail(keyB, conflict, ms(5)), fail(keyC, conflict, ms(100)),
		}, requeues: [3]int{1, 1, 1}},
		{name: "without an answer, objects are retried one at a time", qps: -1, steps: []limiterStep{
			fail(keyA, refused, ms(250)), fail(keyB, refused, ms(500)), fail(keyC, refused, ms(750)),
			elapse(ms(250)), fail(keyA, refused, ms(750)),
			elapse(ms(250)), fail(keyB, refused, ms(750)),
		}, requeues: [3]int{2, 2, 1}},
		{name: "a slower client's rate spaces them more", qps: 2, burst: 1, steps: []limiterStep{
			fail(keyA, refused, ms(500)), fail(keyB, refused, ms(1000)),
		}, requeues: [3]int{1, 1, 0}},
		{name: "the first answer releases the objects that waited for it", qps: -1, steps: []limiterStep{
			fail(keyA, refused, ms(250)), fail(keyB, refused, ms(500)), fail(keyC, conflict, ms(5)),
			elapse(ms(300)), answered(keyA, keyB),
			// Their wait was not their fault: the backoff starts over.
			fail(keyA, conflict, ms(5)), fail(keyB, refused, ms(250)),
			answered(keyB), answered(),
		}, requeues: [3]int{2, 2, 1}},
		{name: "an outage neither grows nor resets an answered backoff", qps: -1, steps: []limiterStep{
			fail(keyA, conflict, ms(5)), fail(keyA, conflict, ms(10)),
			fail(keyA, refused, ms(250)), fail(keyA, refused, ms(500)),
			answered(keyA), fail(keyA, conflict, ms(20)),
		}, requeues: [3]int{5, 0, 0}},
		{name: "an answer while the server was reachable releases nothing", qps: -1, steps: []limiterStep{
			fail(keyA, conflict, ms(5)), answered(), fail(keyA, conflict, ms(10)),
		}, requeues: [3]int{2, 0, 0}},
		{name: "a forgotten object is not released", qps: -1, steps: []limiterStep{
			fail(keyA, refused, ms(250)), fail(keyB, refused, ms(500)), forgetKey(keyA), answered(keyB),
		}, requeues: [3]int{0, 1, 0}},
		{name: "the probes of a new outage start afresh", qps: -1, steps: []limiterStep{
			fail(keyA, refused, ms(250)), fail(keyB, refused, ms(500)), answered(keyA, keyB),
			fail(keyC, refused, ms(250)),
		}, requeues: [3]int{1, 1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
			r := NewLimiter[string](clk, tc.qps, tc.burst)
			for i, s := range tc.steps {
				switch {
				case s.wait > 0:
					clk.Step(s.wait)
				case s.answer:
					if got, want := sorted(r.Reachable()), sorted(s.released); !slices.Equal(got, want) {
						t.Errorf("step %d: reachable() = %v, want %v", i, got, want)
					}
				case s.forget:
					r.Forget(s.key)
				default:
					r.Failed(s.key, s.err)
					if got := r.When(s.key); got != s.want {
						t.Errorf("step %d: When(%s) after %v = %v, want %v", i, s.key, s.err, got, s.want)
					}
				}
			}
			for i, k := range []string{keyA, keyB, keyC} {
				if got := r.NumRequeues(k); got != tc.requeues[i] {
					t.Errorf("NumRequeues(%s) = %d, want %d", k, got, tc.requeues[i])
				}
			}
		})
	}
}

// When alone, without failed, is an answered failure: the queue's
// contract holds for any caller.
func TestRetryLimiterWhenAlone(t *testing.T) {
	r := NewLimiter[string](clocktesting.NewFakeClock(time.Unix(1000, 0)), -1, 0)
	for _, want := range []time.Duration{ms(5), ms(10), ms(20)} {
		if got := r.When(keyA); got != want {
			t.Errorf("When(a) = %v, want %v", got, want)
		}
	}
	if got := r.Reachable(); got != nil {
		t.Errorf("reachable() = %v, want nothing: the server never went away", got)
	}
}

func TestExponential(t *testing.T) {
	tests := []struct {
		failures int
		want     time.Duration
	}{
		{0, 5 * time.Millisecond},
		{1, 10 * time.Millisecond},
		{10, 5120 * time.Millisecond},
		{17, 655360 * time.Millisecond},
		{18, retryMaxDelay},
		{2000, retryMaxDelay},
	}
	for _, tc := range tests {
		if got := exponential(tc.failures); got != tc.want {
			t.Errorf("exponential(%d) = %v, want %v", tc.failures, got, tc.want)
		}
	}
}

func TestUnreachable(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"no error", nil, false},
		{"connection refused", fmt.Errorf("patch configmaps.v1 ns/a: %w", refused), true},
		{"timeout", &url.Error{Op: "Patch", URL: "https://127.0.0.1:6443", Err: context.DeadlineExceeded}, true},
		{"connection reset", fmt.Errorf("patch: %w", syscall.ECONNRESET), true},
		{"EOF", fmt.Errorf("patch: %w", io.ErrUnexpectedEOF), true},
		{"conflict", conflict, false},
		{"throttled", apierrors.NewTooManyRequests("slow down", 1), false},
		{"server error", fmt.Errorf("patch: %w", apierrors.NewInternalError(errors.New("etcd"))), false},
		{"unavailable", apierrors.NewServiceUnavailable("starting"), false},
		{"not found", apierrors.NewNotFound(gr, "a"), false},
		{"no request", errors.New("encode patch for configmaps.v1 ns/a: bad value"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Unreachable(tc.err); got != tc.want {
				t.Errorf("Unreachable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
