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

	mu      sync.Mutex
	waiting fifo[T] // the backlog
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
	if q.waiting.n == 0 && q.TypedRateLimitingInterface.Len() < q.bound || q.ShuttingDown() {
		q.TypedRateLimitingInterface.Add(k)
		return
	}
	q.waiting.push(k)
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
	if q.waiting.n == 0 || q.TypedRateLimitingInterface.Len() >= q.bound/2 {
		return
	}
	for q.waiting.n > 0 && q.TypedRateLimitingInterface.Len() < q.bound {
		q.TypedRateLimitingInterface.Add(q.waiting.pop())
		q.depth.Dec()
	}
}

// ShutDown shuts the queue down and drops the backlog: like the keys in
// the queue, its keys are not synced.
func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	for range q.waiting.n {
		q.depth.Dec()
	}
	q.waiting = fifo[T]{}
	q.mu.Unlock()
	q.TypedRateLimitingInterface.ShutDown()
}

// Waiting returns how many keys wait in the backlog; Len tells how many
// the queue holds.
func (q *Queue[T]) Waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting.n
}

// chunkKeys is how many keys a chunk of the backlog holds. A chunk is
// freed once drained, where one slice would keep the room of every key
// of the burst, and more for its growth, until the backlog is empty.
const chunkKeys = 1024

// fifo is a list of keys, first in, first out, in chunks of chunkKeys.
type fifo[T any] struct {
	chunks [][]T // chunks[0][head:] are the oldest keys
	head   int
	n      int // keys held
}

func (f *fifo[T]) push(k T) {
	if len(f.chunks) == 0 || len(f.chunks[len(f.chunks)-1]) == chunkKeys {
		f.chunks = append(f.chunks, make([]T, 0, chunkKeys))
	}
	last := &f.chunks[len(f.chunks)-1]
	*last = append(*last, k)
	f.n++
}

// pop removes and returns the oldest key; f holds one.
func (f *fifo[T]) pop() T {
	var zero T
	c := f.chunks[0]
	k := c[f.head]
	c[f.head] = zero // the backlog no longer holds the key's strings
	f.head++
	f.n--
	switch {
	case f.n == 0:
		*f = fifo[T]{}
	case f.head == chunkKeys:
		f.chunks[0], f.chunks, f.head = nil, f.chunks[1:], 0
	}
	return k
}

// noGauge counts nothing.
type noGauge struct{}

func (noGauge) Inc() {}
func (noGauge) Dec() {}
