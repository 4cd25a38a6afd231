package metrics

import (
	"fmt"
	"slices"
	"testing"
)

// The coverage gauge shows nothing before the caches have synced, then
// every state of each rule's key some object counts for, and only the
// rules in force.
func TestCoverage(t *testing.T) {
	m := New()
	c := m.PerRule.Coverage
	series := func() []string {
		families, err := m.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range families {
			if f.GetName() != "kube_annotator_rule_coverage_objects" {
				continue
			}
			keys := map[string]bool{}
			for _, s := range f.GetMetric() {
				l := s.GetLabel() // sorted by name: key, kind, rule, state
				keys[l[2].GetValue()+"/"+l[1].GetValue()+"/"+l[0].GetValue()] = true
				if v := s.GetGauge().GetValue(); v != 0 {
					out = append(out, fmt.Sprintf("%s/%s/%s=%s:%g", l[2].GetValue(), l[1].GetValue(), l[0].GetValue(), l[3].GetValue(), v))
				}
			}
			if len(f.GetMetric()) != len(CoverageStates)*len(keys) {
				out = append(out, fmt.Sprintf("%d series", len(f.GetMetric())))
			}
		}
		slices.Sort(out)
		return out
	}
	team := CoverageKey{"team", "label", "team", "compliant"}
	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"counted before the caches synced: nothing", func() {
			c.SetRules([]string{"team"})
			c.Add(team, 2)
		}, nil},
		{"synced", func() { c.SetSynced(true) }, []string{"team/label/team=compliant:2"}},
		{"one object moves", func() {
			c.Add(team, -1)
			c.Add(CoverageKey{"team", "label", "team", "pending"}, 1)
		}, []string{"team/label/team=compliant:1", "team/label/team=pending:1"}},
		{"the rule leaves: its series go", func() { c.SetRules([]string{"other"}) }, nil},
		{"it is back, its objects still counted", func() { c.SetRules([]string{"team"}) }, []string{"team/label/team=compliant:1", "team/label/team=pending:1"}},
		{"no object counts: no series", func() {
			c.Add(team, -1)
			c.Add(CoverageKey{"team", "label", "team", "pending"}, -1)
		}, nil},
	}
	for _, st := range steps {
		st.do()
		if got := series(); !slices.Equal(got, st.want) {
			t.Errorf("%s: series %q, want %q", st.name, got, st.want)
		}
	}
}
