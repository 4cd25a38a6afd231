package fight

import (
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

const (
	// Window is the period in which more than Writes writes to one
	// object are a fight.
	Window = time.Minute
	// Writes is how many writes to one object within Window are not yet
	// a fight.
	Writes = 3
	// BackoffBase is how long the first write held back in a fight waits
	// after the last write; each write after it doubles the wait.
	BackoffBase = time.Second
	// BackoffMax caps the wait between two writes to an object in a fight.
	BackoffMax = 5 * time.Minute
	// MaxKeys is how many keys the detector keeps of one object: the
	// ones written last.
	MaxKeys = 8
	// MaxManagers is how many other field managers are named in the
	// fight of one object: the first seen.
	MaxManagers = 3
	// Quiet is how long an object must go without a write for its fight
	// to end. It is longer than BackoffMax, so that a fight that goes on
	// does not end between two of its writes. A fight that goes on is
	// reported again every Quiet.
	Quiet = 10 * time.Minute
)

// Report says why Hold reports a fight.
type Report int

const (
	// None: nothing to report.
	None Report = iota
	// Started: the object has just entered a fight.
	Started
	// Continues: the fight goes on; its last report is Quiet old.
	Continues
)

// Verdict is what Hold decides for a write.
type Verdict struct {
	// Wait is how long the write must wait; 0 lets it go now.
	Wait time.Duration
	// Report says whether to report the fight now.
	Report Report
	// Writes is how many writes within Window set the key of the change
	// written most often to the value the change sets it to.
	Writes int
	// Fought is true when the write is one of a fight: it sets a key
	// fought over, and is held back (by Wait, maybe 0).
	Fought bool
}

// Detector counts writes per object and key, and holds the writes to
// objects in a fight back. It is safe for concurrent use. K identifies an
// object.
type Detector[K comparable] struct {
	clock clock.PassiveClock
	ended func(K)
	seed  maphash.Seed

	mu sync.Mutex
	// recent and older are the objects written once, as fingerprints,
	// with that write: recent since rotated, older in the Window before.
	recent, older map[uint64]first
	rotated       time.Time
	// states are the objects written more than once within Window with
	// a key set to one value, and those in a fight.
	states map[K]*state
}

// first is what is kept of an object's first writes: the time and sum
// of the last, and the sigs of all, within Window of each other.
type first struct {
	at       int64 // UnixNano
	sum, sig uint64
}

// NewDetector returns a detector reading time from clk; ended, if not
// nil, is called (under the detector's lock, so it must not call it back)
// with each object whose fight ends, or is forgotten, after it started.
func NewDetector[K comparable](clk clock.PassiveClock, ended func(K)) *Detector[K] {
	if ended == nil {
		ended = func(K) {}
	}
	return &Detector[K]{
		clock: clk, ended: ended, seed: maphash.MakeSeed(),
		recent: map[uint64]first{}, older: map[uint64]first{},
		rotated: clk.Now(), states: map[K]*state{},
	}
}

// Hold is asked before a write of change to k: it returns how long the
// write must wait, and whether to report a fight. Objects not in a fight
// never wait, nor does a change that sets no key fought over to the value
// fought over.
func (d *Detector[K]) Hold(k K, change Change) Verdict {
	now := d.clock.Now().UnixNano()
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.live(k, now)
	if s == nil {
		return Verdict{}
	}
	writes, fought := s.count(change, now)
	v := Verdict{Writes: writes}
	switch {
	case writes < Writes && !fought:
		return v // not yet a fight, or a change of other keys
	case s.backoff == 0:
		s.backoff, s.reported, v.Report = BackoffBase, now, Started
		s.held = s.fight(change, now)
	case writes >= Writes:
		s.held = max(s.held, s.fight(change, now)) // another key joins the fight
	}
	if v.Report == None && now-s.reported >= int64(Quiet) {
		s.reported, v.Report = now, Continues
	}
	v.Fought = true
	v.Wait = max(0, time.Duration(s.held+int64(s.backoff)-now))
	return v
}

// Wrote is told of each write that changed k, with the change it made.
func (d *Detector[K]) Wrote(k K, change Change) {
	now := d.clock.Now().UnixNano()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rotate(now)
	f := maphash.Comparable(d.seed, k)
	if s := d.live(k, now); s != nil {
		fighting := s.backoff > 0
		if s.wrote(change, now) && fighting {
			s.held = now
			s.backoff = min(2*s.backoff, BackoffMax)
		}
		if fighting && s.backoff == 0 {
			d.ended(k) // each key fought over was written with another value
		}
		return
	}
	prev, ok := d.recent[f]
	if !ok {
		prev, ok = d.older[f]
	}
	switch {
	case !ok || now-prev.at > int64(Window):
		d.recent[f] = first{now, change.sum, change.sig}
		return
	case prev.sig&change.sig == 0:
		// No key set to a value again yet: remember these keys too.
		d.recent[f] = first{now, change.sum, prev.sig | change.sig}
		return
	}
	delete(d.recent, f)
	delete(d.older, f)
	s := &state{}
	if prev.sum == change.sum {
		s.wrote(change, prev.at) // the last write made the same change
	}
	s.wrote(change, now)
	d.states[k] = s
}

// Saw records manager as one of the other field managers that revert
// what the controller writes to k, if k is in a fight and fewer than
// MaxManagers are recorded; Unknown is never recorded. It returns the
// managers recorded, in the order seen, and whether manager is new.
func (d *Detector[K]) Saw(k K, manager string) (managers []string, added bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.states[k]
	if s == nil || s.backoff == 0 {
		return nil, false
	}
	if manager != Unknown && !slices.Contains(s.managers, manager) && len(s.managers) < MaxManagers {
		s.managers, added = append(s.managers, manager), true
	}
	return slices.Clone(s.managers), added
}

// Forget drops what the detector knows of k, e.g. once it is deleted.
func (d *Detector[K]) Forget(k K) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.drop(k)
}

// Sweep drops the states that expired (a fight's Quiet after its last
// write, a Window for an object not in a fight) and the fingerprints
// older than Window; call it about every Window, so that fights end on
// time when nothing is written any more.
func (d *Detector[K]) Sweep() {
	now := d.clock.Now().UnixNano()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rotate(now)
	for k, s := range d.states {
		if s.expired(now) {
			d.drop(k)
		}
	}
}

// Len returns how many objects have a state, and how many of them are in
// a fight.
func (d *Detector[K]) Len() (states, fighting int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.states {
		if s.backoff > 0 {
			fighting++
		}
	}
	return len(d.states), fighting
}

// live returns k's state, or nil when it has none or it expired (then it
// is dropped).
func (d *Detector[K]) live(k K, now int64) *state {
	s := d.states[k]
	if s != nil && s.expired(now) {
		d.drop(k)
		return nil
	}
	return s
}

func (d *Detector[K]) drop(k K) {
	if s, ok := d.states[k]; ok {
		delete(d.states, k)
		if s.backoff > 0 {
			d.ended(k)
		}
	}
}

// rotate moves the fingerprints of first writes a Window old to older,
// dropping those that were there.
func (d *Detector[K]) rotate(now int64) {
	since := time.Duration(now - d.rotated.UnixNano())
	if since < Window {
		return
	}
	d.older, d.recent = d.recent, map[uint64]first{}
	if since >= 2*Window {
		d.older = map[uint64]first{}
	}
	d.rotated = time.Unix(0, now)
}

// expired reports a state that can be dropped: a fight Quiet after the
// last write of a key fought over, and an object not in a fight a Window
// after its last write (no write of it is within Window any more).
func (s *state) expired(now int64) bool {
	if s.backoff == 0 {
		return now-s.last > int64(Window)
	}
	return now-s.held > int64(Quiet)
}
