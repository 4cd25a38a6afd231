package retry

import (
	"errors"
	"io"
	"math"
	"net"
	"net/url"
	"sync"
	"time"

	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

const (
	// retryBaseDelay and retryMaxDelay bound an object's exponential
	// backoff, as client-go's default controller rate limiter does.
	retryBaseDelay = 5 * time.Millisecond
	retryMaxDelay  = 1000 * time.Second
	// probeInterval is how often, while the API server does not answer, one
	// of the objects waiting for it is tried again: the first write that
	// gets an answer tells that the server is back.
	probeInterval = 250 * time.Millisecond
)

// Limiter is a work queue's rate limiter. It tells two kinds of
// failed syncs apart, as Failed reports them:
//
//   - The API server answered with an error (a conflict, throttling, an
//     error of its own): the object is retried with exponential backoff,
//     5 ms doubling up to 1000 s, and all such retries together at most at
//     the client's rate limit (qps, burst), beyond which they would only
//     wait in the client.
//   - The API server did not answer (it is down or cannot be reached):
//     the failure is not the object's, and does not grow its backoff.
//     While the server does not answer, such objects are retried one at a
//     time, every probeInterval (or 1/qps, if slower), whatever their
//     number. The first answer, which Reachable reports, ends the outage:
//     Reachable returns the objects that waited for it, to be retried at
//     once.
//
// It is safe for concurrent use.
type Limiter[K comparable] struct {
	clock  clock.PassiveClock
	bucket *rate.Limiter
	// probeEvery is the interval between retries while the server does
	// not answer.
	probeEvery time.Duration

	mu    sync.Mutex
	items map[K]*retryState
	// down is set from a failure without an answer to the next answer.
	down bool
	// nextProbe is when the latest retry scheduled during the outage runs.
	nextProbe time.Time
}

// retryState is what the limiter knows of one object that failed.
type retryState struct {
	// requeues counts every retry; failures only those the server
	// answered, which set the exponent of the backoff.
	requeues, failures int
	// unreachable is set when the last failure got no answer.
	unreachable bool
}

var _ workqueue.TypedRateLimiter[string] = (*Limiter[string])(nil)

// NewLimiter returns a limiter on clk for a client limited to qps
// requests per second with burst; a qps of zero or less is no limit.
func NewLimiter[K comparable](clk clock.PassiveClock, qps float32, burst int) *Limiter[K] {
	limit, every := rate.Inf, probeInterval
	if qps > 0 {
		limit = rate.Limit(qps)
		every = max(every, time.Duration(float64(time.Second)/float64(qps)))
	}
	return &Limiter[K]{
		clock:      clk,
		bucket:     rate.NewLimiter(limit, max(burst, 1)),
		probeEvery: every,
		items:      map[K]*retryState{},
	}
}

// Failed records why the last sync of key failed, before the queue asks
// When to retry it. An error without an answer from the API server starts
// an outage.
func (r *Limiter[K]) Failed(key K, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.state(key)
	st.unreachable = Unreachable(err)
	r.down = r.down || st.unreachable
}

// When returns how long key waits before it is retried.
func (r *Limiter[K]) When(key K) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	st := r.state(key)
	st.requeues++
	if st.unreachable && r.down {
		r.nextProbe = laterOf(r.nextProbe, now).Add(r.probeEvery)
		return r.nextProbe.Sub(now)
	}
	var backoff time.Duration
	if !st.unreachable {
		backoff = exponential(st.failures)
		st.failures++
	}
	return max(backoff, r.bucket.ReserveN(now, 1).DelayFrom(now))
}

// Reachable records that the API server answered a request, and returns
// the objects that wait because it did not answer before: the caller
// retries them now.
func (r *Limiter[K]) Reachable() []K {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.down {
		return nil
	}
	r.down, r.nextProbe = false, time.Time{}
	var keys []K
	for k, st := range r.items {
		if st.unreachable {
			st.unreachable = false
			keys = append(keys, k)
		}
	}
	return keys
}

// Forget drops what the limiter knows of key: its sync succeeded or will
// not be retried.
func (r *Limiter[K]) Forget(key K) {
	r.mu.Lock()
	delete(r.items, key)
	r.mu.Unlock()
}

// NumRequeues returns how many times key has been retried since it was
// last forgotten.
func (r *Limiter[K]) NumRequeues(key K) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.items[key]; ok {
		return st.requeues
	}
	return 0
}

// state returns key's state, created if need be. r.mu must be held.
func (r *Limiter[K]) state(key K) *retryState {
	st, ok := r.items[key]
	if !ok {
		st = &retryState{}
		r.items[key] = st
	}
	return st
}

// exponential is the backoff after failures earlier answered failures.
func exponential(failures int) time.Duration {
	d := float64(retryBaseDelay) * math.Pow(2, float64(failures))
	if d >= float64(retryMaxDelay) {
		return retryMaxDelay
	}
	return time.Duration(d)
}

// laterOf returns the later of a and b.
func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Unreachable reports whether err is the failure of a request that got no
// answer from the API server: the connection was refused, reset or timed
// out. An error the server answered with (any status) is not.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return false
	}
	var urlErr *url.Error
	var netErr net.Error
	return errors.As(err, &urlErr) || errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err)
}
