package diff

import (
	"slices"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/scan"
)

func TestSummary(t *testing.T) {
	obj := func(rules ...string) *scan.Object {
		o := &scan.Object{}
		for _, r := range rules {
			o.Changes = append(o.Changes, scan.Change{Kind: "annotation", Key: "k" + r, Rule: r})
		}
		return o
	}
	audit := &scan.Object{Audit: []reconcile.AuditChange{{Rule: "quiet"}}}
	got := Summary([]*scan.Object{obj("b", "a", "a"), obj("a"), obj("")}, []*scan.Object{audit})
	want := []string{
		"rule a: 2 objects would change",
		"rule b: 1 object would change",
		"rule quiet (audit): 1 object would change; run does not write for it",
		"no rule: 1 object would lose keys no rule wants any more",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Summary() =\n%q\nwant\n%q", got, want)
	}
	if got := Summary(nil, nil); len(got) != 0 {
		t.Errorf("Summary(nothing) = %q, want nothing", got)
	}
}
