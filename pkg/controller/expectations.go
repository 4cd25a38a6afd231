package controller

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// expectationTTL bounds how long a sync waits for the echo of its own
// write before it trusts the cache again, in case the echo never comes.
const expectationTTL = time.Minute

// expectations remembers, per object, the resourceVersion the controller
// patched from. Until the informer delivers a newer version the cache is
// stale with respect to our own write, and syncing again would repeat it.
type expectations struct {
	mu sync.Mutex
	m  map[Key]expectation
}

type expectation struct {
	fromRV string
	at     time.Time
}

func newExpectations() *expectations { return &expectations{m: map[Key]expectation{}} }

// record notes that the object was patched from fromRV to toRV. A patch
// that changed nothing on the server keeps the resourceVersion and brings
// no event, so there is nothing to wait for.
func (e *expectations) record(k Key, fromRV, toRV string) {
	if fromRV == toRV {
		return
	}
	e.mu.Lock()
	e.m[k] = expectation{fromRV: fromRV, at: time.Now()}
	e.mu.Unlock()
}

// pending reports whether the cached version cachedRV is the one we already
// patched, so the echo of that patch is still on its way.
func (e *expectations) pending(k Key, cachedRV string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	exp, ok := e.m[k]
	if !ok {
		return false
	}
	if exp.fromRV == cachedRV && time.Since(exp.at) < expectationTTL {
		return true
	}
	delete(e.m, k)
	return false
}

// forget drops what is known about k, e.g. once the object is gone.
func (e *expectations) forget(k Key) {
	e.mu.Lock()
	delete(e.m, k)
	e.mu.Unlock()
}

// forgetResource drops what is known about the objects of gvr.
func (e *expectations) forgetResource(gvr schema.GroupVersionResource) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k := range e.m {
		if k.GVR == gvr {
			delete(e.m, k)
		}
	}
}

// waiting reports whether a write to an object of gvr awaits its echo.
func (e *expectations) waiting(gvr schema.GroupVersionResource) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, exp := range e.m {
		if k.GVR == gvr && time.Since(exp.at) < expectationTTL {
			return true
		}
	}
	return false
}

// len returns the number of outstanding expectations.
func (e *expectations) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.m)
}
