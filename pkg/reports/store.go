package reports

import (
	"maps"
	"slices"
	"strings"
	"sync"
)

// Store keeps the verdict on every object reported, by the namespace of
// its report ("" for the ClusterReport), and the lifecycle of each
// report. The controller records; the Writer takes the reports that
// changed and settles what it did.
type Store struct {
	mu      sync.Mutex
	reports map[string]*report
	// rules are the rules in force: findings of others are not reported.
	rules map[string]bool
}

// phase is where a report is in its lifecycle, as this process knows it.
type phase uint8

const (
	// absent: no report in the cluster.
	absent phase = iota
	// found: a report written by an earlier process, to rewrite or delete.
	found
	// written: the report holds what hash sums.
	written
)

// report is the state of one report: the verdicts on its objects, and its
// lifecycle, which advance alone changes.
type report struct {
	objects map[objectKey]Verdict
	// gen counts the changes of objects; dirty says a change or a failed
	// write is not written yet.
	gen   uint64
	dirty bool
	phase phase
	hash  [32]byte
}

// objectKey names an object within its report.
type objectKey struct {
	resource, group string
	name            string
}

// NewStore returns an empty Store, with every rule in force.
func NewStore() *Store { return &Store{reports: map[string]*report{}} }

// Record replaces the verdict on the object key names by v; the zero
// Verdict forgets it.
func (s *Store) Record(key Key, v Verdict) {
	ok := objectKey{key.GVR.Resource, key.GVR.Group, key.Name}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reports[key.Namespace]
	if was, in := r.get(ok); in && was.equal(v) || !in && v.empty() {
		return // most syncs: nothing changed
	}
	if r == nil {
		r = &report{objects: map[objectKey]Verdict{}}
		s.reports[key.Namespace] = r
	}
	if v.empty() {
		delete(r.objects, ok)
	} else {
		r.objects[ok] = v
	}
	r.changed()
}

// get returns the verdict on the object ok names, if any; r may be nil.
func (r *report) get(ok objectKey) (Verdict, bool) {
	if r == nil {
		return Verdict{}, false
	}
	v, in := r.objects[ok]
	return v, in
}

// changed marks r as to write.
func (r *report) changed() {
	r.gen++
	r.dirty = true
}

// ForgetResource forgets the objects of the resource of group, a resource
// no longer ruled.
func (s *Store) ForgetResource(group, resource string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.reports {
		n := len(r.objects)
		maps.DeleteFunc(r.objects, func(k objectKey, _ Verdict) bool { return k.group == group && k.resource == resource })
		if len(r.objects) != n {
			r.changed()
		}
	}
}

// SetRules says which rules are in force: the findings of the others
// leave the reports when they are written next, while their objects are
// synced again.
func (s *Store) SetRules(names []string) {
	rules := make(map[string]bool, len(names))
	for _, n := range names {
		rules[n] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if maps.Equal(rules, s.rules) {
		return
	}
	s.rules = rules
	for _, r := range s.reports {
		r.changed()
	}
}

// Found records reports that an earlier process wrote, by namespace, so
// that each is rewritten or deleted once the caches have synced.
func (s *Store) Found(namespaces []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ns := range namespaces {
		r := s.reports[ns]
		if r == nil {
			r = &report{objects: map[objectKey]Verdict{}}
			s.reports[ns] = r
		}
		r.advance(foundInCluster, [32]byte{})
		r.changed()
	}
}

// snapshot is a report to write, as the store held it.
type snapshot struct {
	namespace string
	gen       uint64
	phase     phase
	hash      [32]byte
	objects   []object
	rules     map[string]bool
}

// object is one object of a snapshot.
type object struct {
	objectKey
	Verdict
}

// dirty returns a snapshot of every report to write, sorted by namespace.
// The verdicts are shared with the store, which replaces them and never
// changes them.
func (s *Store) dirty() []snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []snapshot
	for ns, r := range s.reports {
		if !r.dirty {
			continue
		}
		sn := snapshot{namespace: ns, gen: r.gen, phase: r.phase, hash: r.hash, rules: s.rules,
			objects: make([]object, 0, len(r.objects))}
		for k, v := range r.objects {
			sn.objects = append(sn.objects, object{k, v})
		}
		out = append(out, sn)
	}
	slices.SortFunc(out, func(a, b snapshot) int { return strings.Compare(a.namespace, b.namespace) })
	return out
}

// outcome is what happened to a report: what the Writer did of a
// snapshot, or a report found in the cluster.
type outcome uint8

const (
	// failed: nothing is known to have changed; the report stays dirty.
	failed outcome = iota
	// applied: the report holds the snapshot (or already did).
	applied
	// deleted: the report is gone (or was).
	deleted
	// foundInCluster: a report written by an earlier process is listed.
	foundInCluster
)

// advance moves r's lifecycle on what happened to the report, hash
// summing what was applied: the one place its phase changes.
func (r *report) advance(o outcome, hash [32]byte) {
	switch {
	case o == applied:
		r.phase, r.hash = written, hash
	case o == deleted:
		r.phase, r.hash = absent, [32]byte{}
	case o == foundInCluster && r.phase == absent:
		r.phase = found
	}
}

// settle records what the Writer did of sn, hash summing what it
// applied (report.advance). A report changed
// since sn was taken stays dirty; one with no object that is gone leaves
// the store.
func (s *Store) settle(sn snapshot, o outcome, hash [32]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reports[sn.namespace]
	if r == nil {
		return
	}
	if o == failed {
		return
	}
	r.advance(o, hash)
	if r.gen == sn.gen {
		r.dirty = false
	}
	if r.phase == absent && len(r.objects) == 0 {
		delete(s.reports, sn.namespace)
	}
}

// Len returns the number of objects the store holds a verdict on.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.reports {
		n += len(r.objects)
	}
	return n
}
