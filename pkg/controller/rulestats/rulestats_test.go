package rulestats

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

var configMaps = rulestest.ConfigMaps.GVR

// The per-rule gauges count objects: syncing one again changes nothing,
// a change moves it, and forgetting it takes it out. Objects of the same
// name in two namespaces are two objects.
func TestRuleStats(t *testing.T) {
	m := metrics.New()
	s := New(m, nil)
	a, b := &rules.Compiled{Rule: rulefile.Rule{Name: "a"}}, &rules.Compiled{Rule: rulefile.Rule{Name: "b"}}
	x, y, z := Key{configMaps, "ns", "x"}, Key{configMaps, "ns", "y"}, Key{configMaps, "other", "x"}
	gauges := func() [4]float64 {
		return [4]float64{value(t, m.PerRule.Selected.WithLabelValues("a")), value(t, m.PerRule.Selected.WithLabelValues("b")),
			value(t, m.PerRule.AuditPending.WithLabelValues("b")),
			value(t, m.PerRule.Ignored.WithLabelValues("configmaps", metrics.ScopeNamespace))}
	}
	steps := []struct {
		do      func()
		want    [4]float64
		wantLen int
	}{
		{func() { s.Record(x, Object{selected: []*rules.Compiled{a, b}, audit: []string{"b"}}) }, [4]float64{1, 1, 1, 0}, 1},
		{func() { s.Record(x, Object{selected: []*rules.Compiled{a, b}, audit: []string{"b"}}) }, [4]float64{1, 1, 1, 0}, 1},
		{func() { s.Record(y, Object{selected: []*rules.Compiled{a}}) }, [4]float64{2, 1, 1, 0}, 2},
		{func() { s.Record(z, Object{selected: []*rules.Compiled{a}}) }, [4]float64{3, 1, 1, 0}, 3},
		{func() { s.Record(x, Object{selected: []*rules.Compiled{b}}) }, [4]float64{2, 1, 0, 0}, 3},
		{func() { s.Record(y, Object{ignored: metrics.ScopeNamespace}) }, [4]float64{1, 1, 0, 1}, 3},
		{func() { s.Forget(z) }, [4]float64{0, 1, 0, 1}, 2},
		{func() { s.Forget(z) }, [4]float64{0, 1, 0, 1}, 2},
		{func() { s.Record(z, Object{selected: []*rules.Compiled{b}}) }, [4]float64{0, 2, 0, 1}, 3},
		{func() { s.Forget(x) }, [4]float64{0, 1, 0, 1}, 2},
		{func() { s.ForgetResource(configMaps) }, [4]float64{0, 0, 0, 0}, 0},
	}
	for i, st := range steps {
		st.do()
		if got := gauges(); got != st.want {
			t.Errorf("step %d: selected{a,b}, auditPending{b}, ignored = %v, want %v", i, got, st.want)
		}
		if n := s.Len(); n != st.wantLen {
			t.Errorf("step %d: %d objects remembered, want %d", i, n, st.wantLen)
		}
	}
}

// The unset gauge counts each object once per rule and reason, moves
// with it, and record says when what is unset on an object changed — the
// controller logs only then; its reasons are the rules' own.
func TestRuleStatsUnset(t *testing.T) {
	if !slices.Equal(metrics.UnsetReasons, rules.Reasons) {
		t.Fatalf("metrics.UnsetReasons = %v, rules.Reasons = %v; want the same", metrics.UnsetReasons, rules.Reasons)
	}
	m := metrics.New()
	s := New(m, nil)
	x := Key{configMaps, "ns", "x"}
	failed := []rules.Unset{{Rule: "a", Kind: "label", Key: "k", Reason: rules.ReasonError}, {Rule: "a", Kind: "label", Key: "l", Reason: rules.ReasonError}}
	missing := []rules.Unset{{Rule: "a", Kind: "label", Key: "k", Reason: rules.ReasonSourceMissing}}
	gauges := func() [2]float64 {
		return [2]float64{value(t, m.PerRule.Unset.WithLabelValues("a", rules.ReasonError)), value(t, m.PerRule.Unset.WithLabelValues("a", rules.ReasonSourceMissing))}
	}
	for i, st := range []struct {
		unset       []rules.Unset
		want        [2]float64
		wantChanged bool
	}{
		{failed, [2]float64{1, 0}, true},
		{failed, [2]float64{1, 0}, false},
		{missing, [2]float64{0, 1}, true},
		{nil, [2]float64{0, 0}, true},
		{nil, [2]float64{0, 0}, false},
	} {
		changed := s.Record(x, Object{unset: unsetPairs(st.unset)})
		if got := gauges(); got != st.want || changed != st.wantChanged {
			t.Errorf("step %d: unset{a,error}, unset{a,source-missing} = %v, changed %v; want %v, %v", i, got, changed, st.want, st.wantChanged)
		}
	}
}

// BenchmarkRuleStatsHeap reports the heap the per-rule gauges keep per
// object that one rule selects, with the coverage state of its key.
func BenchmarkRuleStatsHeap(b *testing.B) {
	const n = 100000
	r := &rules.Compiled{Rule: rulefile.Rule{Name: "a"}}
	for b.Loop() {
		s := New(metrics.New(), nil)
		before := fixture.LiveHeap()
		for i := range n {
			buf := buffers.Get().(*[]byte)
			*buf = append((*buf)[:0], "a\x01label\x01team\x01compliant\x00"...)
			s.Record(Key{configMaps, "ns", fmt.Sprintf("object-%06d", i)}, Object{selected: []*rules.Compiled{r}, coverage: buf})
		}
		b.ReportMetric(float64(fixture.LiveHeap()-before)/n, "B/object")
		runtime.KeepAlive(s)
	}
}

// value reads a gauge.
func value(t testing.TB, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.GetGauge().GetValue()
}
