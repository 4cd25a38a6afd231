package expect

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TTL bounds how long a sync waits for the echo of its own write before
// it trusts the cache again, in case the echo never comes.
const TTL = time.Minute

// Key names an object: its resource, namespace and name.
type Key struct {
	GVR       schema.GroupVersionResource
	Namespace string
	Name      string
}

// Echoes remembers, per object, the resourceVersion the controller
// patched from. Until the informer delivers a newer version the cache is
// stale with respect to our own write, and syncing again would repeat it.
type Echoes struct {
	mu sync.Mutex
	m  map[Key]expectation
}

type expectation struct {
	fromRV string
	at     time.Time
}

// New returns Echoes that await nothing.
func New() *Echoes { return &Echoes{m: map[Key]expectation{}} }

// Record notes that the object was patched from fromRV to toRV. A patch
// that changed nothing on the server keeps the resourceVersion and brings
// no event, so there is nothing to wait for.
func (e *Echoes) Record(k Key, fromRV, toRV string) {
	if fromRV == toRV {
		return
	}
	e.mu.Lock()
	e.m[k] = expectation{fromRV: fromRV, at: time.Now()}
	e.mu.Unlock()
}

// Pending reports whether the cached version cachedRV is the one we already
// patched, so the echo of that patch is still on its way.
func (e *Echoes) Pending(k Key, cachedRV string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	exp, ok := e.m[k]
	if !ok {
		return false
	}
	if exp.fromRV == cachedRV && time.Since(exp.at) < TTL {
		return true
	}
	delete(e.m, k)
	return false
}

// Forget drops what is known about k, e.g. once the object is gone.
func (e *Echoes) Forget(k Key) {
	e.mu.Lock()
	delete(e.m, k)
	e.mu.Unlock()
}

// ForgetResource drops what is known about the objects of gvr.
func (e *Echoes) ForgetResource(gvr schema.GroupVersionResource) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k := range e.m {
		if k.GVR == gvr {
			delete(e.m, k)
		}
	}
}

// Waiting reports whether a write to an object of gvr awaits its echo.
func (e *Echoes) Waiting(gvr schema.GroupVersionResource) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, exp := range e.m {
		if k.GVR == gvr && time.Since(exp.at) < TTL {
			return true
		}
	}
	return false
}

// Len returns the number of outstanding expectations.
func (e *Echoes) Len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.m)
}
