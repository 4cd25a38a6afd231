package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// configMapsNamed creates empty ConfigMaps in ns.
func configMapsNamed(t *testing.T, ns string, names ...string) {
	t.Helper()
	for _, n := range names {
		env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, n))
	}
}

// An object, or a namespace, that carries kube-annotator.io/ignore: "true"
// is left alone — not even the keys the controller set before are pruned —
// while its siblings converge; taking the annotation off brings it back.
func TestIgnoreOptOut(t *testing.T) {
	ns, quiet := env.NewNamespace(t), env.NewNamespace(t)
	configMapsNamed(t, ns, "ignored", "a", "b")
	configMapsNamed(t, quiet, "c")
	userSet(t, h.ConfigMaps, ns, "ignored", `{"metadata":{"annotations":{"kube-annotator.io/ignore":"true","team":"legacy"}}}`)
	userSet(t, h.Namespaces, "", quiet, `{"metadata":{"annotations":{"kube-annotator.io/ignore":"true"}}}`)
	before, beforeQuiet := env.Get(t, h.ConfigMaps, ns, "ignored"), env.Get(t, h.ConfigMaps, quiet, "c")
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: team
  resources: [configmaps]
  namespaces: [%s, %s]
  annotations: {team: web}
`, ns, quiet))

	// diff (and once, through the same decision) leaves them out.
	out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig)
	if code != 1 || !strings.Contains(out, ns+"/a") || strings.Contains(out, ns+"/ignored") || strings.Contains(out, quiet+"/c") {
		t.Errorf("diff: exit %d, stdout:\n%s\nstderr:\n%s\nwant %s/a and b, not the opted-out objects", code, out, stderr, ns)
	}

	p := startRun(t, "--rules", rulesFile)
	defer p.Terminate(t)
	for _, n := range []string{"a", "b"} {
		env.WaitForAnnotation(t, 30*time.Second, h.ConfigMaps, ns, n, "team", "web")
	}
	// The ConfigMaps of other namespaces that opt out count too: the
	// controllers' records do.
	p.WaitSeries(t, 10*time.Second, "kube_annotator_ignored_objects", map[string]string{"scope": "object"}, 1+optedOutElsewhere(t, ns, quiet))
	p.WaitSeries(t, 10*time.Second, "kube_annotator_ignored_objects", map[string]string{"scope": "namespace"}, 1)
	for _, o := range []struct {
		ns, name, rv string
	}{{ns, "ignored", before.GetResourceVersion()}, {quiet, "c", beforeQuiet.GetResourceVersion()}} {
		if got := env.Get(t, h.ConfigMaps, o.ns, o.name); got.GetResourceVersion() != o.rv {
			t.Errorf("%s/%s was written (resourceVersion %s → %s) although it opts out; annotations %v",
				o.ns, o.name, o.rv, got.GetResourceVersion(), got.GetAnnotations())
		}
	}

	// explain says why.
	out, stderr, code = runCLI(t, "explain", "configmaps/c", "-n", quiet, "--rules", rulesFile, "--kubeconfig", env.Kubeconfig)
	if code != 0 || !strings.Contains(out, `Ignored: namespace "`+quiet+`" carries kube-annotator.io/ignore`) {
		t.Errorf("explain configmaps/c: exit %d, stdout:\n%s\nstderr:\n%s", code, out, stderr)
	}

	// Opting back in converges the object.
	userSet(t, h.ConfigMaps, ns, "ignored", `{"metadata":{"annotations":{"kube-annotator.io/ignore":null}}}`)
	env.WaitForAnnotation(t, 10*time.Second, h.ConfigMaps, ns, "ignored", "team", "web")
	userSet(t, h.Namespaces, "", quiet, `{"metadata":{"annotations":{"kube-annotator.io/ignore":"false"}}}`)
	env.WaitForAnnotation(t, 10*time.Second, h.ConfigMaps, quiet, "c", "team", "web")
	p.WaitSeries(t, 10*time.Second, "kube_annotator_ignored_objects", nil, optedOutElsewhere(t, ns, quiet))
}

// A rule in audit mode writes nothing, while its metric counts the objects
// it would change and explain and diff show the change; switching it to
// enforce in the file applies it within seconds.
func TestAuditMode(t *testing.T) {
	ns := env.NewNamespace(t)
	configMapsNamed(t, ns, "x0", "x1", "x2")
	const rule = `rules:
- name: audit-team
  resources: [configmaps]
  namespaces: [%s]
  mode: %s
  annotations: {team: web}
`
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(rule, ns, "audit"))
	p := startRun(t, "--rules", rulesFile, "-n", ns, "-v", "1")
	defer p.Terminate(t)
	p.WaitSeries(t, 30*time.Second, "kube_annotator_rule_audit_pending_objects", map[string]string{"rule": "audit-team"}, 3)
	p.WaitSeries(t, 5*time.Second, "kube_annotator_rule_selected_objects", map[string]string{"rule": "audit-team"}, 3)
	if w := p.Writes(t, "success") + p.Writes(t, "error"); w != 0 {
		t.Errorf("writes_total = %d with only an audit rule, want 0\n%s", w, grepLines(p.Scrape(t), "writes_total"))
	}
	if n := p.LogLines(t, "Audit rule would change object", "audit-team"); n < 3 {
		t.Errorf("%d audit log lines, want one per object (3)", n)
	}

	args := []string{"--rules", rulesFile, "--kubeconfig", env.Kubeconfig}
	out, stderr, code := runCLI(t, append([]string{"explain", "configmaps/x0", "-n", ns, "-o", "json"}, args...)...)
	var x struct {
		Rules []struct {
			Rule, Mode string
			Selects    bool
		}
		Changes []any
		Audit   []struct{ Key, Rule string }
	}
	if err := json.Unmarshal([]byte(out), &x); code != 0 || err != nil {
		t.Fatalf("explain -o json: exit %d, %v; stderr %s", code, err, stderr)
	}
	if len(x.Rules) != 1 || x.Rules[0].Mode != "audit" || !x.Rules[0].Selects || len(x.Changes) != 0 ||
		len(x.Audit) != 1 || x.Audit[0].Key != "team" || x.Audit[0].Rule != "audit-team" {
		t.Errorf("explain -o json = %s; want the audit rule selecting, no change and its audit change", out)
	}
	_, stderr, code = runCLI(t, append([]string{"diff", "-n", ns}, args...)...)
	if code != 0 || !strings.Contains(stderr, "rule audit-team (audit): 3 objects would change; run does not write for it") {
		t.Errorf("diff: exit %d (want 0: nothing run would write), stderr:\n%s", code, stderr)
	}

	replaceFile(t, rulesFile, fmt.Sprintf(rule, ns, "enforce"))
	start := time.Now()
	for _, n := range []string{"x0", "x1", "x2"} {
		env.WaitForAnnotation(t, 5*time.Second-time.Since(start), h.ConfigMaps, ns, n, "team", "web")
	}
	p.WaitSeries(t, 5*time.Second, "kube_annotator_rule_audit_pending_objects", map[string]string{"rule": "audit-team"}, 0)
	p.WaitSeries(t, 5*time.Second, "kube_annotator_rule_keys_changed_total", map[string]string{"rule": "audit-team", "action": "set"}, 3)
}

// explain's errors name what is wrong: the object, the resource, the rules.
func TestExplainErrors(t *testing.T) {
	ns := env.NewNamespace(t)
	rulesFile := writeFile(t, "rules.yaml", "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n")
	for _, tc := range []struct {
		arg, want string
		code      int
	}{
		{"configmaps/missing", "configmaps.v1 " + ns + "/missing not found", 1},
		{"secrets/x", `resource "secrets" (secrets.v1): no rule in ` + rulesFile + " names it", 1},
		{"frobs/x", `resource "frobs"`, 1},
		{"configmaps", `"configmaps": name one object as RESOURCE/NAME or RESOURCE NAME`, 2}, // a usage error
	} {
		_, stderr, code := runCLI(t, "explain", tc.arg, "-n", ns, "--rules", rulesFile, "--kubeconfig", env.Kubeconfig)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("explain %s: exit %d, stderr %q; want exit %d and %q", tc.arg, code, stderr, tc.code, tc.want)
		}
	}
}

// grepLines returns the lines of body that contain s.
func grepLines(body []byte, s string) string {
	var out []string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// optedOutElsewhere counts the ConfigMaps outside namespaces that opt out
// of the rules themselves.
func optedOutElsewhere(t *testing.T, namespaces ...string) float64 {
	t.Helper()
	list, err := env.Dynamic.Resource(h.ConfigMaps).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0.0
	for _, cm := range list.Items {
		if !slices.Contains(namespaces, cm.GetNamespace()) && cm.GetAnnotations()["kube-annotator.io/ignore"] == "true" {
			n++
		}
	}
	return n
}
