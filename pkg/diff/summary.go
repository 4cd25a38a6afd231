package diff

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kube-annotator/kube-annotator/pkg/scan"
)

// Summary says, rule by rule, how many objects diff found that each
// would change: the rules run enforces, from pending; those in audit mode,
// for which run writes nothing, from audited; and the objects that lose
// keys no rule wants any more. Rules are listed by name.
func Summary(pending, audited []*scan.Object) []string {
	enforced := countByRule(pending, func(o *scan.Object) []string {
		var names []string
		for _, c := range o.Changes {
			names = append(names, c.Rule)
		}
		return names
	})
	audits := countByRule(audited, func(o *scan.Object) []string {
		var names []string
		for _, a := range o.Audit {
			names = append(names, a.Rule)
		}
		return names
	})
	var out []string
	for _, rc := range enforced {
		if rc.rule == "" {
			continue
		}
		out = append(out, fmt.Sprintf("rule %s: %s would change", rc.rule, objects(rc.n)))
	}
	for _, rc := range audits {
		out = append(out, fmt.Sprintf("rule %s (audit): %s would change; run does not write for it", rc.rule, objects(rc.n)))
	}
	if i := slices.IndexFunc(enforced, func(rc ruleCount) bool { return rc.rule == "" }); i >= 0 {
		out = append(out, fmt.Sprintf("no rule: %s would lose keys no rule wants any more", objects(enforced[i].n)))
	}
	return out
}

// ruleCount is how many objects one rule would change.
type ruleCount struct {
	rule string
	n    int
}

// countByRule counts, for each rule that rules names for an object, the
// objects it names it for (once per object), sorted by rule.
func countByRule(objs []*scan.Object, rules func(*scan.Object) []string) []ruleCount {
	counts := map[string]int{}
	for _, o := range objs {
		seen := map[string]bool{}
		for _, r := range rules(o) {
			if !seen[r] {
				seen[r] = true
				counts[r]++
			}
		}
	}
	out := make([]ruleCount, 0, len(counts))
	for r, n := range counts {
		out = append(out, ruleCount{r, n})
	}
	slices.SortFunc(out, func(a, b ruleCount) int { return cmp.Compare(a.rule, b.rule) })
	return out
}

// objects is "1 object" or "n objects".
func objects(n int) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}
