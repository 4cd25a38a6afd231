package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/scan"
)

func TestRuleSummary(t *testing.T) {
	obj := func(rules ...string) *scan.Object {
		o := &scan.Object{}
		for _, r := range rules {
			o.Changes = append(o.Changes, scan.Change{Kind: "annotation", Key: "k" + r, Rule: r})
		}
		return o
	}
	audit := &scan.Object{Audit: []reconcile.AuditChange{{Rule: "quiet"}}}
	got := ruleSummary([]*scan.Object{obj("b", "a", "a"), obj("a"), obj("")}, []*scan.Object{audit})
	want := []string{
		"rule a: 2 objects would change",
		"rule b: 1 object would change",
		"rule quiet (audit): 1 object would change; run does not write for it",
		"no rule: 1 object would lose keys no rule wants any more",
	}
	if !slices.Equal(got, want) {
		t.Errorf("ruleSummary() =\n%q\nwant\n%q", got, want)
	}
	if got := ruleSummary(nil, nil); len(got) != 0 {
		t.Errorf("ruleSummary(nothing) = %q, want nothing", got)
	}
}

func TestCheckWarnsOfOverlaps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	content := "rules:\n- {name: web, resources: [configmaps], selector: app=web, annotations: {team: web}}\n" +
		"- {name: front, resources: [configmaps], selector: tier=front, annotations: {team: front}}\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := invoke("kube-annotator", "check", "--offline", "--rules", path)
	want := "warning: " + path + `: rules[1]: rules web and front may both select configmaps and want different things of annotation "team"`
	if code != 0 || !strings.Contains(stderr, want) || !strings.Contains(stdout, "valid (2 rules)") {
		t.Errorf("check --offline: exit %d, stdout %q, stderr %q; want exit 0 and the warning %q", code, stdout, stderr, want)
	}
}
