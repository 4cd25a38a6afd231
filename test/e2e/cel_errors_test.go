package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// A value whose CEL expression fails on an object (a field it reads is
// gone) never deletes the key the object carries: the value last written
// stays, until the expression yields again and the key follows. Each
// failing object is counted, by rule and reason, in
// kube_annotator_rule_unset_objects, logged once while it keeps failing,
// and reported by diff and once as a warning with the count.
func TestCELErrorKeepsValue(t *testing.T) {
	ns := env.NewNamespace(t)
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: color
  resources: [configmaps]
  namespaces: [%s]
  annotations:
    example.com/color: {cel: "object.data.x == '' ? 'none' : object.data.color"}
`, ns))
	for name, data := range map[string]map[string]any{"a": {"color": "red", "x": "0"}, "b": {"color": "blue", "x": "0"}, "c": {"x": "0"}} {
		cm := h.Object("v1", "ConfigMap", ns, name)
		cm.Object["data"] = data
		env.Create(t, h.ConfigMaps, ns, cm)
	}
	const warning = "warning: rule color: %d %s: error (its expression failed; a value an object has is kept"
	if _, stderr, _ := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); !strings.Contains(stderr, fmt.Sprintf(warning, 1, "object")) {
		t.Errorf("diff with c failing: stderr\n%s\nwant %q", stderr, fmt.Sprintf(warning, 1, "object"))
	}

	p := startRun(t, "--rules", rulesFile)
	unset := map[string]string{"rule": "color", "reason": "error"}
	for name, want := range map[string]string{"a": "red", "b": "blue"} {
		env.WaitForAnnotation(t, 15*time.Second, h.ConfigMaps, ns, name, "example.com/color", want)
	}
	p.WaitSeries(t, 15*time.Second, "kube_annotator_rule_unset_objects", unset, 1)

	userSet(t, h.ConfigMaps, ns, "a", `{"data":{"color":null}}`)
	p.WaitSeries(t, 15*time.Second, "kube_annotator_rule_unset_objects", unset, 2)
	if a, _ := metadataOf(t, h.ConfigMaps, ns, "a"); a["example.com/color"] != "red" {
		t.Errorf("a's expression fails: annotation %q, want the value last written, red, kept", a["example.com/color"])
	}
	// While it keeps failing, syncs (of changes to data.x, which the
	// expression reads) log it no more.
	syncs := map[string]string{"resource": "configmaps", "result": "success"}
	before := promtext.MetricValue(p.Scrape(t), "kube_annotator_syncs_total", syncs)
	// One change at a time: the queue folds changes of one object made
	// before it is synced into one sync.
	for i := 1; i <= 3; i++ {
		userSet(t, h.ConfigMaps, ns, "a", fmt.Sprintf(`{"data":{"x":"%d"}}`, i))
		waitFor(t, 15*time.Second, fmt.Sprintf("sync %d of 3 more", i), func() bool {
			return promtext.MetricValue(p.Scrape(t), "kube_annotator_syncs_total", syncs) >= before+float64(i)
		})
	}
	if n := p.LogLines(t, "Value not set", ns+"/a"); n != 1 {
		t.Errorf("%d lines logged for a, which failed through 4 syncs; want 1", n)
	}
	if a, _ := metadataOf(t, h.ConfigMaps, ns, "a"); a["example.com/color"] != "red" {
		t.Errorf("after more syncs: annotation %q, want red kept", a["example.com/color"])
	}
	if _, stderr, _ := runCLI(t, "once", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); !strings.Contains(stderr, fmt.Sprintf(warning, 2, "objects")) {
		t.Errorf("once with a and c failing: stderr\n%s\nwant %q", stderr, fmt.Sprintf(warning, 2, "objects"))
	}

	// It yields again: the key follows, the count drops.
	userSet(t, h.ConfigMaps, ns, "a", `{"data":{"color":"green"}}`)
	env.WaitForAnnotation(t, 15*time.Second, h.ConfigMaps, ns, "a", "example.com/color", "green")
	p.WaitSeries(t, 15*time.Second, "kube_annotator_rule_unset_objects", unset, 1)
}
