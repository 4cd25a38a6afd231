package rulestats

import (
	"maps"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/reports"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// The coverage gauge counts each object once per rule, key and state,
// moves it with its verdict and drops it when it goes; its states are
// reconcile's own.
func TestRuleStatsCoverage(t *testing.T) {
	if !slices.Equal(metrics.CoverageStates, reconcile.States) {
		t.Fatalf("metrics.CoverageStates = %v, reconcile.States = %v; want the same", metrics.CoverageStates, reconcile.States)
	}
	const team = "rules:\n- {name: team, resources: [configmaps], labels: {team: {fromNamespace: {label: team}}}}\n"
	tg := rulestest.Compile(t, team, rulestest.ConfigMaps, rulestest.Namespaces).SortedTargets()[0]
	namespaces := map[string]*metav1.ObjectMeta{
		"checkout": {Name: "checkout", Labels: map[string]string{"team": "payments"}},
		"tools":    {Name: "tools"},
	}
	look := source.Namespaces(func(name string) (metav1.Object, bool) { ns, ok := namespaces[name]; return ns, ok })
	m := metrics.New()
	m.PerRule.Coverage.SetRules([]string{"team"})
	m.PerRule.Coverage.SetSynced(true)
	verdicts := verdicts{}
	s := New(m, verdicts)
	record := func(ns, name string, labels map[string]string, changed string) {
		o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
		d, err := reconcile.Decide(tg, o, look, reconcile.FieldManager)
		if err != nil {
			t.Fatal(err)
		}
		s.Record(Key{configMaps, ns, name}, Of(o, d, changed))
	}
	states := func() [4]float64 {
		var out [4]float64
		for i, st := range []string{reconcile.StateCompliant, reconcile.StatePending, reconcile.StateSourceMissing, reconcile.StateFighting} {
			out[i] = coverage(t, m, metrics.CoverageKey{Rule: "team", Kind: "label", Key: "team", State: st})
		}
		return out
	}
	payments := map[string]string{"team": "payments"}
	steps := []struct {
		name string
		do   func()
		want [4]float64 // compliant, pending, source-missing, fighting
	}{
		{"web-1 lacks the label", func() { record("checkout", "web-1", nil, reconcile.StatePending) }, [4]float64{0, 1, 0, 0}},
		{"api-1 has it", func() { record("checkout", "api-1", payments, reconcile.StatePending) }, [4]float64{1, 1, 0, 0}},
		{"dns-1's namespace lacks it", func() { record("tools", "dns-1", nil, reconcile.StatePending) }, [4]float64{1, 1, 1, 0}},
		{"web-1 synced again", func() { record("checkout", "web-1", nil, reconcile.StatePending) }, [4]float64{1, 1, 1, 0}},
		{"web-1 fought over", func() { record("checkout", "web-1", nil, reconcile.StateFighting) }, [4]float64{1, 0, 1, 1}},
		{"web-1 written", func() { record("checkout", "web-1", nil, reconcile.StateCompliant) }, [4]float64{2, 0, 1, 0}},
		{"web-1's write echoed", func() { record("checkout", "web-1", payments, reconcile.StatePending) }, [4]float64{2, 0, 1, 0}},
		{"dns-1 deleted", func() { s.Forget(Key{configMaps, "tools", "dns-1"}) }, [4]float64{2, 0, 0, 0}},
		{"the resource is no longer ruled", func() { s.ForgetResource(configMaps) }, [4]float64{0, 0, 0, 0}},
	}
	for _, st := range steps {
		st.do()
		if got := states(); got != st.want {
			t.Errorf("%s: compliant, pending, source-missing, fighting = %v, want %v", st.name, got, st.want)
		}
	}
	if len(verdicts) != 0 {
		t.Errorf("the reports hold %v, want nothing", verdicts)
	}
	record("tools", "dns-1", nil, reconcile.StatePending)
	want := []reports.Finding{{Rule: "team", Kind: "label", Key: "team", State: reconcile.StateSourceMissing, Why: `fromNamespace: namespace "tools" has no label "team"`}}
	if got := verdicts[reports.Key{GVR: configMaps, Namespace: "tools", Name: "dns-1"}]; !slices.Equal(got.Findings, want) {
		t.Errorf("the reports' verdict on tools/dns-1 is %+v, want findings %+v", got, want)
	}
	record("checkout", "api-1", payments, reconcile.StatePending)
	o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "checkout", Name: "api-1", Labels: payments}}
	d, _ := reconcile.Decide(tg, o, look, reconcile.FieldManager)
	if n := testing.AllocsPerRun(100, func() { s.Record(Key{configMaps, "checkout", "api-1"}, Of(o, d, reconcile.StatePending)) }); n > 1 {
		t.Errorf("recording an object with the same verdict again allocates %v times, want at most 1", n)
	}
}

// verdicts is a Reporter that keeps the verdicts told.
type verdicts map[reports.Key]reports.Verdict

func (v verdicts) Record(k reports.Key, verdict reports.Verdict) {
	if verdict.Pass+verdict.Skip+len(verdict.Findings) == 0 {
		delete(v, k)
	} else {
		v[k] = verdict
	}
}
func (v verdicts) ForgetResource(group, resource string) {
	maps.DeleteFunc(v, func(k reports.Key, _ reports.Verdict) bool { return k.GVR.Group == group && k.GVR.Resource == resource })
}
func (verdicts) SetRules([]string) {}

// coverage reads a series of the coverage gauge; 0 when it is absent.
func coverage(t *testing.T, m *metrics.Metrics, k metrics.CoverageKey) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "kube_annotator_rule_coverage_objects" {
			continue
		}
		for _, s := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range s.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["rule"] == k.Rule && l["kind"] == k.Kind && l["key"] == k.Key && l["state"] == k.State {
				return s.GetGauge().GetValue()
			}
		}
	}
	return 0
}
