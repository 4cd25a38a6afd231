package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// ifAbsentRules sets the label psa and the annotation inject only where
// absent on the ConfigMaps of ns; without psa, only inject.
func ifAbsentRules(ns string, psa bool) string {
	s := fmt.Sprintf(`rules:
- name: defaults
  resources: [configmaps]
  namespaces: [%s]
  annotations: {inject: {value: enabled, ifAbsent: true}}
`, ns)
	if psa {
		s += "  labels: {psa: {value: baseline, ifAbsent: true}}\n"
	}
	return s
}

// Keys set only where absent (ifAbsent): a present key is kept, an absent
// one added; a key the controller added and someone then changed is
// theirs — the API server moves it to their managedFields entry — and is
// neither reset nor pruned, while one nobody changed is pruned with the
// rule.
func TestIfAbsent(t *testing.T) {
	ns := env.NewNamespace(t)
	present := h.Object("v1", "ConfigMap", ns, "present")
	present.SetLabels(map[string]string{"psa": "privileged"})
	env.Create(t, h.ConfigMaps, ns, present)
	configMapsNamed(t, ns, "absent", "untouched", "forced")
	labelled := h.Object("v1", "ConfigMap", ns, "labelled")
	labelled.SetLabels(map[string]string{"app": "x"})
	env.Create(t, h.ConfigMaps, ns, labelled)
	rulesFile := writeFile(t, "rules.yaml", ifAbsentRules(ns, true))
	checkLoopRefused(t, ns)
	p := startRun(t, "--rules", rulesFile)

	added := func(a, l map[string]string) bool { return a["inject"] == "enabled" && l["psa"] == "baseline" }
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "absent", "both keys added", added)
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "labelled", "both keys added", added)
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "forced", "both keys added", added)
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "untouched", "both keys added", added)
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "present", "inject added, psa kept", func(a, l map[string]string) bool {
		return a["inject"] == "enabled" && l["psa"] == "privileged"
	})
	// Someone changes the key the controller added: the API server gives
	// it to them, and the controller leaves it. "absent" and "forced" were
	// created without managedFields, so the controller's first write to
	// them was a server-side apply, "labelled" got a merge patch.
	takeOver(t, ns, "absent", "Apply", false)
	takeOver(t, ns, "labelled", "Update", false)
	takeOver(t, ns, "forced", "Apply", true)

	// The rule stops setting psa: the controller's own psa is pruned, the
	// changed one and the present one stay.
	replaceFile(t, rulesFile, ifAbsentRules(ns, false))
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "untouched", "psa pruned", func(_, l map[string]string) bool { return !hasKey(l, "psa") })
	for name, want := range map[string]string{"absent": "restricted", "labelled": "restricted", "forced": "restricted", "present": "privileged"} {
		if got := env.Get(t, h.ConfigMaps, ns, name).GetLabels()["psa"]; got != want {
			t.Errorf("%s after the rule dropped psa: psa=%q, want %q", name, got, want)
		}
	}
	checkNoWrites(t, ns, "absent", "labelled", "forced", "present", "untouched")
	p.Terminate(t)

	t.Run("admission", testIfAbsentAdmission)
}

// takeOver has someone else set the label psa of the ConfigMap name of ns,
// which the controller set with a write of kind op: with a merge patch, or
// with a server-side apply (which must force), and checks that the API
// server moves psa to them and that the controller then leaves it.
// Deleting inject makes the controller look at the object again; once
// inject is back, it has decided on the changed psa.
func takeOver(t *testing.T, ns, name, op string, apply bool) {
	t.Helper()
	if owners := fieldOwners(t, env.Get(t, h.ConfigMaps, ns, name), "f:labels", "psa"); !slices.Equal(owners, []string{"kube-annotator/" + op}) {
		t.Fatalf("%s: label psa owned by %v, want kube-annotator/%s", name, owners, op)
	}
	theirs := "someone-else/Update"
	if apply {
		theirs = "someone-else/Apply"
		body := []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q,"labels":{"psa":"restricted"}}}`, name, ns))
		cms := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns)
		_, err := cms.Patch(t.Context(), name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "someone-else"})
		if !apierrors.IsConflict(err) {
			t.Fatalf("%s: server-side apply of psa without force: %v, want a conflict with kube-annotator", name, err)
		}
		if _, err := cms.Patch(t.Context(), name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: "someone-else", Force: ptr.To(true)}); err != nil {
			t.Fatalf("%s: forced server-side apply of psa: %v", name, err)
		}
	} else {
		userSet(t, h.ConfigMaps, ns, name, `{"metadata":{"labels":{"psa":"restricted"}}}`)
	}
	if owners := fieldOwners(t, env.Get(t, h.ConfigMaps, ns, name), "f:labels", "psa"); !slices.Equal(owners, []string{theirs}) {
		t.Fatalf("%s after someone else's write: label psa owned by %v, want %s only", name, owners, theirs)
	}
	userSet(t, h.ConfigMaps, ns, name, `{"metadata":{"annotations":{"inject":null}}}`)
	waitMetadata(t, 10*time.Second, h.ConfigMaps, ns, name, "inject added again, psa theirs", func(a, l map[string]string) bool {
		return a["inject"] == "enabled" && l["psa"] == "restricted"
	})
}

// checkLoopRefused checks that the way to say "only where absent" with a
// selector, which never settles, is refused, pointing to ifAbsent.
func checkLoopRefused(t *testing.T, ns string) {
	t.Helper()
	loop := writeFile(t, "loop.yaml", strings.Replace(ifAbsentRules(ns, true), "  labels:", "  selector: '!psa'\n  labels:", 1))
	out, stderr, code := runCLI(t, "check", "--offline", "--rules", loop)
	if code != 1 || !strings.Contains(stderr, `rules[0].selector: "!psa" tests label "psa"`) || !strings.Contains(stderr, "ifAbsent: true") {
		t.Errorf("check --offline of a selector on the key the rule sets: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 1 and the selector refused", code, out, stderr)
	}
}

// checkNoWrites checks that the named ConfigMaps of ns, and every other,
// are not written for 2s: the steady state.
func checkNoWrites(t *testing.T, ns string, names ...string) {
	t.Helper()
	versions := func() []string {
		var out []string
		for _, name := range names {
			out = append(out, env.Get(t, h.ConfigMaps, ns, name).GetResourceVersion())
		}
		return out
	}
	before := versions()
	env.Quiet(t, 2*time.Second, "configmaps")
	if after := versions(); !slices.Equal(before, after) {
		t.Errorf("resourceVersions of %v moved from %v to %v in 2s of steady state: the objects are still being written", names, before, after)
	}
}

// With run --admission-policies, a create that carries the key keeps it,
// one that lacks it gets it, listed in the marker; and when someone then
// changes that key, the controller stops listing it rather than reset it.
func testIfAbsentAdmission(t *testing.T) {
	ns := env.NewNamespace(t)
	rulesFile := writeFile(t, "rules.yaml", ifAbsentRules(ns, true)+probeRule(ns))
	if !env.Features.MutatingAdmissionPolicyV1 {
		ifAbsentDegraded(t, ns, rulesFile)
		return
	}
	deletePoliciesAtEnd(t)
	startRun(t, "--rules", rulesFile, "--admission-policies")
	waitPolicies(t, ns, 15*time.Second)

	cmMarker := marker("configmaps")
	with := h.Object("v1", "ConfigMap", ns, "with")
	with.SetLabels(map[string]string{"psa": "privileged"})
	with.SetAnnotations(map[string]string{"inject": "disabled"})
	got := env.Create(t, h.ConfigMaps, ns, with)
	checkAnnotations(t, "created with the keys", got, map[string]string{"inject": "disabled", cmMarker: ""})
	if l := got.GetLabels()["psa"]; l != "privileged" {
		t.Errorf("created with psa=privileged: psa=%q after admission", l)
	}

	got = env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, "without"))
	checkAnnotations(t, "created without the keys", got, map[string]string{"inject": "enabled", cmMarker: "inject,label:psa"})
	if l := got.GetLabels()["psa"]; l != "baseline" {
		t.Errorf("created without psa: psa=%q after admission, want baseline", l)
	}

	userSet(t, h.ConfigMaps, ns, "without", `{"metadata":{"labels":{"psa":"restricted"}}}`)
	waitMetadata(t, 10*time.Second, h.ConfigMaps, ns, "without", "psa no longer listed", func(a, l map[string]string) bool {
		return a[cmMarker] == "inject" && l["psa"] == "restricted"
	})
	if l := env.Get(t, h.ConfigMaps, ns, "with").GetLabels()["psa"]; l != "privileged" {
		t.Errorf("with: psa=%q, want privileged, as its creator set it", l)
	}
	if out, stderr, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Errorf("diff after convergence: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0", code, out, stderr)
	}
}

// ifAbsentDegraded checks run --admission-policies with ifAbsent rules on
// an API server without MutatingAdmissionPolicy v1: the controller does
// what the policies would, after creation: a present key is kept, an
// absent one added.
func ifAbsentDegraded(t *testing.T, ns, rulesFile string) {
	t.Helper()
	admissionRunDegraded(t, env, ns, rulesFile)
	with := h.Object("v1", "ConfigMap", ns, "with")
	with.SetLabels(map[string]string{"psa": "privileged"})
	with.SetAnnotations(map[string]string{"inject": "disabled"})
	env.Create(t, h.ConfigMaps, ns, with)
	env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, "without"))
	env.WaitForAnnotation(t, 10*time.Second, h.ConfigMaps, ns, "without", "inject", "enabled")
	if l := env.Get(t, h.ConfigMaps, ns, "without").GetLabels()["psa"]; l != "baseline" {
		t.Errorf("created without psa: psa=%q, want baseline", l)
	}
	got := env.Get(t, h.ConfigMaps, ns, "with")
	if a, l := got.GetAnnotations()["inject"], got.GetLabels()["psa"]; a != "disabled" || l != "privileged" {
		t.Errorf("created with the keys: inject=%q psa=%q, want them kept (disabled, privileged)", a, l)
	}
}
