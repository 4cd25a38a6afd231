package retry

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// FailureLogInterval is the shortest time between two lines about the
// failed syncs of one resource.
const FailureLogInterval = 10 * time.Second

// FailureLog logs the syncs that failed and will be retried, one resource
// at a time, so that an outage does not log a line per attempt: the first
// failure of a resource is logged at once, with its object and error; the
// failures that follow within the interval are counted, and logged as one
// line with their number, the last object and the last error when the
// interval ends. A resource whose interval ended with no failure is quiet
// again: its next failure is logged at once.
//
// It is safe for concurrent use.
type FailureLog struct {
	clock    clock.WithDelayedExecution
	interval time.Duration

	mu        sync.Mutex
	resources map[string]*failureCount
}

// failureCount is what is known of one resource's failures since its last
// line.
type failureCount struct {
	// end is when the interval that began with the last line ends.
	end time.Time
	// n counts the failures since the last line; last, lastKey and logger
	// are those of the last one.
	n       int
	last    error
	lastKey fmt.Stringer
	logger  klog.Logger
	// summary is the timer that logs them when the interval ends; nil
	// while n is 0.
	summary clock.Timer
}

// NewFailureLog returns a log of failures on clk that logs a resource's
// at most once per interval.
func NewFailureLog(clk clock.WithDelayedExecution, interval time.Duration) *FailureLog {
	return &FailureLog{clock: clk, interval: interval, resources: map[string]*failureCount{}}
}

// Failed logs, or counts, the failed sync of key, an object of resource,
// with err, its retries-th retry.
func (l *FailureLog) Failed(logger klog.Logger, resource string, key fmt.Stringer, err error, retries int) {
	l.mu.Lock()
	now := l.clock.Now()
	fc := l.resources[resource]
	if fc == nil || fc.n == 0 && !now.Before(fc.end) {
		l.resources[resource] = &failureCount{end: now.Add(l.interval)}
		l.mu.Unlock()
		logger.Error(err, "Sync failed; will retry", "key", key.String(), "retries", retries)
		return
	}
	defer l.mu.Unlock()
	fc.n++
	fc.last, fc.lastKey, fc.logger = err, key, logger
	if fc.summary == nil {
		fc.summary = l.clock.AfterFunc(fc.end.Sub(now), func() { l.summarise(resource) })
	}
}

// summarise logs the failures of resource counted in the interval that
// ends now, and begins the next interval. It does not read the clock: a
// fake clock runs it while it holds its lock.
func (l *FailureLog) summarise(resource string) {
	l.mu.Lock()
	fc := l.resources[resource]
	n, last, lastKey, logger := fc.n, fc.last, fc.lastKey, fc.logger
	fc.n, fc.last, fc.logger, fc.summary = 0, nil, klog.Logger{}, nil
	fc.end = fc.end.Add(l.interval)
	l.mu.Unlock()
	logger.Error(last, "Syncs failed; will retry", "resource", resource, "failures", n,
		"interval", l.interval, "lastKey", lastKey.String())
}
