package backlog

import (
	"sync"

	"k8s.io/client-go/util/workqueue"
)

// Queue is a rate-limited work queue whose Add holds at most Bound keys
// in the queue itself: past it, keys wait in a backlog, first in, first
// out, until the queue holds fewer than half of Bound. A key may be in the
// backlog and in the queue at once, or twice in the backlog: it is then
// synced once more, which finds nothing to do. Keys put back by AddAfter
// and AddRateLimited skip the backlog: they are few.
type Queue[T comparable] struct {
	workqueue.TypedRateLimitingInterface[T]
	bound int
	// depth counts the keys of the backlog in the queue's depth metric.
	depth workqueue.GaugeMetric

	mu sync.Mutex
	// waiting[next:] is the backlog, oldest first; the slice is dropped
	// once drained, so that it keeps no room.
	waiting []T
	next    int
}

// New returns q with a backlog past bound keys (bound ≥ 2), counted in
// depth (nil: none), the gauge q's own depth is counted in.
func New[T comparable](q workqueue.TypedRateLimitingInterface[T], bound int, depth workqueue.GaugeMetric) *Queue[T] {
	if depth == nil {
		depth = noGauge{}
	}
	return &Queue[T]{TypedRateLimitingInterface: q, bound: max(bound, 2), depth: depth}
}

// Add queues k, or puts it in the backlog when the queue holds Bound keys
// or the backlog holds keys already. Once the queue is shut down it drops
// k, as the queue does.
func (q *Queue[T]) Add(k T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.next == len(q.waiting) && q.TypedRateLimitingInterface.Len() < q.bound || q.ShuttingDown() {
		q.TypedRateLimitingInterface.Add(k)
		return
	}
	q.waiting = append(q.waiting, k)
	q.depth.Inc()
}

// Get refills the queue from the backlog when it holds fewer than half
// of Bound keys, then waits for a key as the queue's Get does.
func (q *Queue[T]) Get() (T, bool) {
	q.refill()
	return q.TypedRateLimitingInterface.Get()
}

// refill moves keys from the backlog into the queue until it holds Bound
// keys, if it holds fewer than half.
func (q *Queue[T]) refill() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.next == len(q.waiting) || q.TypedRateLimitingInterface.Len() >= q.bound/2 {
		return
	}
	for q.next < len(q.waiting) && q.TypedRateLimitingInterface.Len() < q.bound {
		var zero T
		k := q.waiting[q.next]
		q.waiting[q.next] = zero // the backlog no longer holds the key's strings
		q.next++
		q.TypedRateLimitingInterface.Add(k)
		q.depth.Dec()
	}
	if q.next == len(q.waiting) {
		q.waiting, q.next = nil, 0
	}
}

// ShutDown shuts the queue down and drops the backlog: like the keys in
// the queue, its keys are not synced.
func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	for range len(q.waiting) - q.next {
		q.depth.Dec()
	}
	q.waiting, q.next = nil, 0
	q.mu.Unlock()
	q.TypedRateLimitingInterface.ShutDown()
}

// Waiting returns how many keys wait in the backlog; Len tells how many
// the queue holds.
func (q *Queue[T]) Waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting) - q.next
}

// noGauge counts nothing.
type noGauge struct{}

func (noGauge) Inc() {}
func (noGauge) Dec() {}
