package expect

import (
	"sync"
	"time"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
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

// slot is a Key as Echoes keeps it: 40 bytes where a Key takes 80, as
// the writes of a burst can await their echoes by the ten thousand.
type slot struct {
	gvr             unique.Handle[schema.GroupVersionResource]
	namespace, name string
}

func (k Key) slot() slot { return slot{unique.Make(k.GVR), k.Namespace, k.Name} }

// epoch is when the process started to count: an expectation's age is
// kept as the time since it, 8 bytes where a time.Time takes 24.
var epoch = time.Now()

// now is the time since epoch, on the monotonic clock.
func now() time.Duration { return time.Since(epoch) }

// Echoes remembers, per object, the resourceVersion the controller
// patched from and the one its write made. Until the informer delivers a
// newer version the cache is stale with respect to our own write, and
// syncing again would repeat it; the event that delivers the version the
// write made needs no sync when the write was inert (see Inert).
type Echoes struct {
	mu sync.Mutex
	m  map[slot]expectation
	// most is the most expectations m has held since it was made: a Go
	// map keeps the room of its largest size, so once a burst of writes
	// has had its echoes, m is made anew (shrink).
	most int
	// swept is when Record last dropped the expectations older than TTL
	// (sweep).
	swept time.Duration
	// inert is, per resource, the keys its latest target only sets.
	inert map[schema.GroupVersionResource]*setOnly
}

type expectation struct {
	fromRV, toRV string
	at           time.Duration // since epoch
	// inert: the write's echo brings nothing a sync would act on, if
	// the API server applied it to the version at fromRV.
	inert bool
	// change is the digest of what the write changed (digest), when
	// inert.
	change uint64
	// asked: a sync was asked for while the cache was still at fromRV,
	// and left the object to the echo's sync.
	asked bool
}

// fresh reports whether the write was made less than TTL ago.
func (exp expectation) fresh() bool { return now()-exp.at < TTL }

// New returns Echoes that await nothing.
func New() *Echoes {
	return &Echoes{m: map[slot]expectation{}, inert: map[schema.GroupVersionResource]*setOnly{}}
}

// Record notes that the object was patched from fromRV to toRV with
// change, a write that Inert found inert or not. A patch that changed
// nothing on the server keeps the resourceVersion and brings no event, so
// there is nothing to wait for.
func (e *Echoes) Record(k Key, fromRV, toRV string, change patch.Change, inert bool) {
	if fromRV == toRV {
		return
	}
	exp := expectation{fromRV: fromRV, toRV: toRV, at: now(), inert: inert}
	if inert {
		exp.change = digest(change)
	}
	e.mu.Lock()
	e.m[k.slot()] = exp
	e.most = max(e.most, len(e.m))
	if exp.at-e.swept >= TTL {
		e.sweep(exp.at)
	}
	e.mu.Unlock()
}

// sweep drops, at most once per TTL, the expectations made TTL or more
// before t: those of objects that left the cache (Absent) and never came
// back. e.mu is held.
func (e *Echoes) sweep(t time.Duration) {
	e.swept = t
	for s, exp := range e.m {
		if t-exp.at >= TTL {
			delete(e.m, s)
		}
	}
}

// shrinkFrom is the least size of m that makes it worth making anew once
// empty.
const shrinkFrom = 1024

// shrink makes m anew when it is empty after holding shrinkFrom or more.
// e.mu is held.
func (e *Echoes) shrink() {
	if len(e.m) == 0 && e.most >= shrinkFrom {
		e.m, e.most = map[slot]expectation{}, 0
	}
}

// Pending reports whether the cached version cachedRV is the one we already
// patched, so the echo of that patch is still on its way. The echo is then
// synced, whatever Echo would say: what the caller would have synced for
// is left to it.
func (e *Echoes) Pending(k Key, cachedRV string) bool {
	s := k.slot()
	e.mu.Lock()
	defer e.mu.Unlock()
	exp, ok := e.m[s]
	if !ok {
		return false
	}
	if exp.fromRV == cachedRV && exp.fresh() {
		exp.asked = true
		e.m[s] = exp
		return true
	}
	delete(e.m, s)
	e.shrink()
	return false
}

// Echo reports whether an update event from old to obj, as the cache
// keeps them, is the echo of an inert write of ours, which needs no sync:
// obj is the version the write made, old the one it was decided on, they
// differ by exactly what the write changed, and no sync was asked for
// meanwhile. Once obj is the version the write made, the expectation is
// done with.
//
// A merge patch carries no resourceVersion: the API server applies it to
// the object as it is, which may be newer than the cache was. When the
// informer then skips that newer version (a relist after the watch
// expired), old and obj differ by more than the write, e.g. by a key an
// earlier write of ours set whose answer was lost, and obj is synced.
func (e *Echoes) Echo(k Key, old, obj metav1.Object) bool {
	s := k.slot()
	e.mu.Lock()
	defer e.mu.Unlock()
	exp, ok := e.m[s]
	if !ok || exp.toRV != obj.GetResourceVersion() {
		return false
	}
	delete(e.m, s)
	e.shrink()
	return exp.inert && !exp.asked && exp.fresh() &&
		old != nil && old.GetResourceVersion() == exp.fromRV && changedBy(old, obj) == exp.change && sameController(old, obj)
}

// Absent notes that a sync found no object k in the cache. It may be
// gone, or have left this replica's shard; or the cache may not have seen
// it yet: after a reshard the new informer's watch can lag the old one's,
// and the object reappear at the version written from. A write made less
// than TTL ago still awaits its echo then; an older one is dropped. What
// is kept of an object that never comes back is swept within two TTLs.
func (e *Echoes) Absent(k Key) {
	s := k.slot()
	e.mu.Lock()
	defer e.mu.Unlock()
	if exp, ok := e.m[s]; ok && !exp.fresh() {
		delete(e.m, s)
		e.shrink()
	}
}

// Forget drops what is known about k, once the object is gone: its
// deletion was seen.
func (e *Echoes) Forget(k Key) {
	s := k.slot()
	e.mu.Lock()
	delete(e.m, s)
	e.shrink()
	e.mu.Unlock()
}

// ForgetResource drops what is known about the objects of gvr.
func (e *Echoes) ForgetResource(gvr schema.GroupVersionResource) {
	h := unique.Make(gvr)
	e.mu.Lock()
	defer e.mu.Unlock()
	for k := range e.m {
		if k.gvr == h {
			delete(e.m, k)
		}
	}
	e.shrink()
}

// Waiting reports whether a write to an object of gvr awaits its echo.
func (e *Echoes) Waiting(gvr schema.GroupVersionResource) bool {
	h := unique.Make(gvr)
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, exp := range e.m {
		if k.gvr == h && exp.fresh() {
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
