package rulestats

import (
	"iter"
	"strings"
	"sync"
	"unique"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/reports"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// Stats remembers, for every object last synced, the rules that select
// it, the rules in audit mode that would change it, whether it is left
// alone and the coverage state of each key the rules set, so that the
// per-rule gauges count objects rather than syncs.
// Objects that no rule selects and that are not ignored take no memory;
// the others take a map slot each, as objects that count in the same
// gauges share what is remembered of them. The slots are kept by
// namespace, then name: a slot holds a name and a handle, 24 bytes,
// where one keyed by both would hold 40.
type Stats struct {
	m          *metrics.Metrics
	reporter   Reporter
	mu         sync.Mutex
	byResource map[schema.GroupVersionResource]map[string]objects
}

// objects is what Stats remembers of the objects of one namespace of a
// resource ("" for a cluster-scoped one), by name; never empty.
type objects map[string]unique.Handle[counted]

// Key names an object: its resource, namespace and name.
type Key struct {
	GVR             schema.GroupVersionResource
	Namespace, Name string
}

// Object is what a sync found of one object.
type Object struct {
	selected []*rules.Compiled // shared with the evaluation: read only
	audit    []string
	ignored  string // "", metrics.ScopeObject or metrics.ScopeNamespace
	// unset are the rules that could not compute a key's value, and why
	// (rules.Unset), each rule and reason once: "rule\x01reason\x00"…
	unset string
	// coverage is the state of each key the rules set (reconcile.KeyState),
	// as coverage.go encodes it, in a buffer of buffers.
	coverage *[]byte
	// verdict is what the reports say of the object.
	verdict reports.Verdict
}

// Reporter keeps the reports (reports.Store): it is told each object's
// verdict, the resources no longer ruled and the rules in force.
type Reporter interface {
	Record(key reports.Key, v reports.Verdict)
	ForgetResource(group, resource string)
	SetRules(names []string)
}

// noReports is the Reporter of a controller that writes no report.
type noReports struct{}

func (noReports) Record(reports.Key, reports.Verdict) {}
func (noReports) ForgetResource(string, string)       {}
func (noReports) SetRules([]string)                   {}

// counted is Object as Stats remembers it: the rules' names, each
// followed by a NUL (no rule name has one), in a comparable value.
type counted struct {
	selected, audit string
	ignored         string
	unset           string
	coverage        string
}

func (s Object) counted() counted {
	var c counted
	var b strings.Builder
	for _, r := range s.selected {
		b.WriteString(r.Name)
		b.WriteByte(0)
	}
	c.selected, b = b.String(), strings.Builder{}
	for _, r := range s.audit {
		b.WriteString(r)
		b.WriteByte(0)
	}
	c.audit, c.ignored, c.unset, c.coverage = b.String(), s.ignored, s.unset, string(s.coverageBytes())
	return c
}

// is reports whether c counts what s found.
func (c counted) is(s Object) bool {
	return c.ignored == s.ignored && c.unset == s.unset && c.coverage == string(s.coverageBytes()) && sameNames(c.selected, len(s.selected), func(i int) string { return s.selected[i].Name }) &&
		sameNames(c.audit, len(s.audit), func(i int) string { return s.audit[i] })
}

// sameNames reports whether list holds the n names name(0), …, name(n-1),
// in order.
func sameNames(list string, n int, name func(int) string) bool {
	i := 0
	for got := range names(list) {
		if i == n || got != name(i) {
			return false
		}
		i++
	}
	return i == n
}

// empty reports whether s counts in no gauge.
func (s Object) empty() bool {
	return len(s.selected) == 0 && len(s.audit) == 0 && s.ignored == "" && s.unset == "" && len(s.coverageBytes()) == 0
}

// names yields the rule names in list.
func names(list string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for name := range strings.SplitSeq(list, "\x00") {
			if name != "" && !yield(name) {
				return
			}
		}
	}
}

// New returns the Stats that keep the per-rule gauges of m, and tell r
// the verdicts of the reports; r may be nil: no reports.
func New(m *metrics.Metrics, r Reporter) *Stats {
	if r == nil {
		r = noReports{}
	}
	return &Stats{m: m, reporter: r, byResource: map[schema.GroupVersionResource]map[string]objects{}}
}

// SetRules says which rules are in force, to the coverage gauge and the
// reports.
func (s *Stats) SetRules(names []string) {
	s.m.PerRule.Coverage.SetRules(names)
	s.reporter.SetRules(names)
}

// Record replaces what is remembered of key by now, adjusting the gauges,
// and reports whether the keys the rules could not compute on it, or why,
// changed.
func (s *Stats) Record(key Key, now Object) (unsetChanged bool) {
	defer now.release()
	s.reporter.Record(reports.Key(key), now.verdict)
	s.mu.Lock()
	defer s.mu.Unlock()
	namespaces := s.byResource[key.GVR]
	objs := namespaces[key.Namespace]
	was, ok := objs[key.Name]
	if ok && was.Value().is(now) || !ok && now.empty() {
		return false // most syncs: nothing to count again, nothing to allocate
	}
	unsetChanged = now.unset != ""
	if ok {
		unsetChanged = was.Value().unset != now.unset
	}
	c := now.counted()
	if ok {
		s.add(key.GVR, was.Value(), -1)
	}
	s.add(key.GVR, c, 1)
	switch {
	case c != (counted{}):
		if namespaces == nil {
			namespaces = map[string]objects{}
			s.byResource[key.GVR] = namespaces
		}
		if objs == nil {
			objs = objects{}
			namespaces[key.Namespace] = objs
		}
		objs[key.Name] = unique.Make(c)
	case len(objs) == 1:
		delete(namespaces, key.Namespace) // its last object: its map goes too
	default:
		delete(objs, key.Name)
	}
	return unsetChanged
}

// add adds delta to the gauges c counts in.
func (s *Stats) add(gvr schema.GroupVersionResource, c counted, delta float64) {
	for r := range names(c.selected) {
		s.m.PerRule.Selected.WithLabelValues(r).Add(delta)
	}
	for r := range names(c.audit) {
		s.m.PerRule.AuditPending.WithLabelValues(r).Add(delta)
	}
	if c.ignored != "" {
		s.m.PerRule.Ignored.WithLabelValues(gvr.GroupResource().String(), c.ignored).Add(delta)
	}
	for pair := range names(c.unset) {
		rule, reason, _ := strings.Cut(pair, "\x01")
		s.m.PerRule.Unset.WithLabelValues(rule, reason).Add(delta)
	}
	for k := range keyStates(c.coverage) {
		s.m.PerRule.Coverage.Add(k, delta)
	}
}

// Forget drops key, an object deleted or no longer ruled.
func (s *Stats) Forget(key Key) { s.Record(key, Object{}) }

// ForgetResource drops every object of gvr, a resource no longer ruled.
func (s *Stats) ForgetResource(gvr schema.GroupVersionResource) {
	s.reporter.ForgetResource(gvr.Group, gvr.Resource)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, objs := range s.byResource[gvr] {
		for _, c := range objs {
			s.add(gvr, c.Value(), -1)
		}
	}
	delete(s.byResource, gvr)
}

// Len returns the number of objects remembered.
func (s *Stats) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, namespaces := range s.byResource {
		for _, objs := range namespaces {
			n += len(objs)
		}
	}
	return n
}

// Of is what Stats remembers of obj, decided as d; changed is the coverage
// state of the keys d's change writes (reconcile.Decision.Coverage).
func Of(obj objcache.Object, d reconcile.Decision, changed string) Object {
	st := Object{selected: d.Evaluation.Selected, verdict: reports.Verdict{GVK: obj.GetObjectKind().GroupVersionKind(), UID: obj.GetUID()}}
	st.coverage = coverageOf(obj, &d, changed, &st.verdict)
	switch {
	case d.Ignored == "":
	case rules.OptsOut(obj.GetAnnotations()):
		st.ignored = metrics.ScopeObject
	default:
		st.ignored = metrics.ScopeNamespace
	}
	for _, a := range d.Audit {
		st.audit = append(st.audit, a.Rule)
	}
	if d.Ignored == "" {
		st.unset = unsetPairs(d.Evaluation.Unset)
	}
	return st
}

// unsetPairs lists each rule and reason of unset once, in order, as
// Object.unset holds them.
func unsetPairs(unset []rules.Unset) string {
	if len(unset) == 0 {
		return ""
	}
	var b strings.Builder
	seen := make(map[[2]string]bool, len(unset))
	for _, u := range unset {
		if p := [2]string{u.Rule, u.Reason}; !seen[p] {
			seen[p] = true
			b.WriteString(u.Rule + "\x01" + u.Reason + "\x00")
		}
	}
	return b.String()
}

// CountKeys counts the keys a write of d changed, by the rule that wants
// them.
func (s *Stats) CountKeys(d reconcile.Decision) {
	for _, kv := range []struct {
		kind string
		m    map[string]*string
	}{{"annotation", d.Change.Annotations}, {"label", d.Change.Labels}} {
		for k, v := range kv.m {
			action := metrics.ActionSet
			if v == nil {
				action = metrics.ActionRemove
			}
			s.m.PerRule.KeysChanged.WithLabelValues(d.Evaluation.RuleFor(kv.kind, k), action).Inc()
		}
	}
}
