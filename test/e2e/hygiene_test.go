package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// A value read from a Namespace annotation that is no valid label value
// (91 characters) is written by the controller into one label truncated
// and into another hashed, as ifInvalid says, and into none where the rule
// gives no ifInvalid; explain says how each was made valid, diff agrees
// with the controller, and a new value of the annotation is followed and
// hashed again, to a label of its own.
func TestIfInvalidFromNamespace(t *testing.T) {
	ns := env.NewNamespace(t)
	first := strings.Repeat("a", 60) + "-" + strings.Repeat("b", 30)
	setDesc := func(v string) {
		t.Helper()
		userSet(t, h.Namespaces, "", ns, fmt.Sprintf(`{"metadata":{"annotations":{"example.com/desc":%q}}}`, v))
	}
	setDesc(first)
	configMapsNamed(t, ns, "x")
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: hygiene
  resources: [configmaps]
  namespaces: [%s]
  labels:
    truncated: {fromNamespace: {annotation: example.com/desc}, ifInvalid: truncate}
    hashed: {fromNamespace: {annotation: example.com/desc}, ifInvalid: hash}
    plain: {fromNamespace: {annotation: example.com/desc}}
`, ns))

	p := startRun(t, "--rules", rulesFile)
	defer p.Terminate(t)
	want := func(v string) {
		t.Helper()
		sum := sha256.Sum256([]byte(v))
		truncated, hashed := v[:63], v[:52]+"-"+hex.EncodeToString(sum[:])[:10]
		waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "x", fmt.Sprintf("truncated %q, hashed %q, no plain", truncated, hashed),
			func(_, l map[string]string) bool {
				return l["truncated"] == truncated && l["hashed"] == hashed && !hasKey(l, "plain")
			})
	}
	want(first)

	out, stderr, code := runCLI(t, "explain", "configmaps/x", "-n", ns, "--rules", rulesFile, "--kubeconfig", env.Kubeconfig)
	for _, says := range []string{"made a valid label value (ifInvalid): truncated from 91 characters", "made a valid label value (ifInvalid): hashed from 91 characters"} {
		if code != 0 || !strings.Contains(out, says) {
			t.Errorf("explain: exit %d, stdout:\n%s\nstderr:\n%s\nwant it to say %q", code, out, stderr, says)
		}
	}
	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff after convergence: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0", code, out, stderr)
	}

	// The same first 63 characters, another end: the truncated label
	// stays, the hashed one changes.
	second := first[:63] + strings.Repeat("c", 28)
	setDesc(second)
	want(second)
}
