package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

// agreeRulesBefore are the rules in force when the controller first set
// its keys; agreeRulesAfter drop example.com/old, add example.com/b and
// remove legacy. Both set example.com/env in namespaces labelled env=prod
// and the web keys on objects labelled app=web.
const (
	agreeRulesBefore = `rules:
- name: base
  resources: [configmaps]
  annotations: {example.com/a: "1", example.com/old: "x"}
` + agreeRulesBoth
	agreeRulesAfter = `rules:
- name: base
  resources: [configmaps]
  annotations: {example.com/a: "1", example.com/b: "2"}
  removeAnnotations: [legacy]
` + agreeRulesBoth
	agreeRulesBoth = `- name: prod
  resources: [configmaps]
  namespaceSelector: env=prod
  annotations: {example.com/env: prod}
- name: web
  resources: [configmaps]
  selector: app=web
  annotations: {example.com/web: "yes"}
  labels: {tier: frontend}
`
)

// predicted is one object of `diff -o json`.
type predicted struct {
	Resource, Namespace, Name string
	Changes                   []change
}

// change is one key's change, as diff reports it.
type change struct {
	Kind string  `json:"kind"`
	Key  string  `json:"key"`
	Old  *string `json:"old"`
	New  *string `json:"new"`
}

// TestDiffAndRunAgree puts ConfigMaps in many states — keys missing or
// wrong, keys the controller set that the rules no longer want, keys
// others set or took over, an object without managedFields, objects and a
// namespace relabelled — and checks that the controller changes exactly
// what `diff` predicted: every listed object's keys as listed, and no
// other object at all.
func TestDiffAndRunAgree(t *testing.T) {
	ns := env.NewNamespace(t)
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.yaml"), filepath.Join(dir, "after.yaml")
	for path, content := range map[string]string{before: agreeRulesBefore, after: agreeRulesAfter} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	seedAgreeScenario(t, ns, before)

	diffArgs := []string{"diff", "-o", "json", "--rules", after, "--kubeconfig", env.Kubeconfig, "-n", ns}
	stdout, stderr, code := runCLI(t, diffArgs...)
	var predictions []predicted
	if err := json.Unmarshal([]byte(stdout), &predictions); code != 1 || err != nil {
		t.Fatalf("diff: exit %d, want 1; %v\n%s%s", code, err, stdout, stderr)
	}
	prediction := map[string]predicted{}
	for _, p := range predictions {
		prediction[p.Name] = p
	}
	// The scenario: every state above but two needs a change.
	wantListed := []string{"legacy", "missing", "no-managed-fields", "owned-unwanted", "relabelled-in", "relabelled-out", "taken-over", "wrong", "wrong-label"}
	if got := slices.Sorted(maps.Keys(prediction)); !slices.Equal(got, wantListed) {
		t.Fatalf("diff lists %v, want %v:\n%s", got, wantListed, stdout)
	}

	objectsBefore := listConfigMaps(t, ns)
	stopRun := startAgreeRun(t, "--rules", after, "-n", ns)
	waitPredicted(t, ns, objectsBefore, prediction)
	env.Quiet(t, 3*time.Second, "configmaps")
	objectsAfter := listConfigMaps(t, ns)
	stopRun()
	checkAsPredicted(t, objectsBefore, objectsAfter, prediction)
	if stdout, _, code := runCLI(t, diffArgs...); code != 0 || strings.TrimSpace(stdout) != "[]" {
		t.Errorf("diff after the controller converged: exit %d, %s; want 0 and []", code, stdout)
	}
}

// seedAgreeScenario creates the scenario's ConfigMaps in ns: some
// converged by `once` with the rules file before, then changed by others;
// some created afterwards.
func seedAgreeScenario(t *testing.T, ns, before string) {
	t.Helper()
	cm := func(name string, anns, labels map[string]string) {
		o := h.Object("v1", "ConfigMap", ns, name)
		o.SetAnnotations(anns)
		o.SetLabels(labels)
		o.Object["data"] = map[string]any{"k": name}
		env.Create(t, h.ConfigMaps, ns, o)
	}
	// The controller's keys, set under the first rules.
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"env":"prod"}}}`)
	for _, name := range []string{"wrong", "owned-unwanted", "taken-over", "relabelled-out", "relabelled-in"} {
		labels := map[string]map[string]string{"relabelled-out": {"app": "web"}, "relabelled-in": {"app": "db"}}[name]
		cm(name, nil, labels)
	}
	cm("no-managed-fields", map[string]string{"legacy": "y"}, nil)
	if stdout, stderr, code := runCLI(t, "once", "--rules", before, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Fatalf("once: exit %d\n%s%s", code, stdout, stderr)
	}

	// What others did since.
	userSet(t, h.ConfigMaps, ns, "wrong", `{"metadata":{"annotations":{"example.com/a":"0"}}}`)
	userSet(t, h.ConfigMaps, ns, "taken-over", `{"metadata":{"annotations":{"example.com/old":"mine"}}}`)
	userSet(t, h.ConfigMaps, ns, "relabelled-out", `{"metadata":{"labels":{"app":"api"}}}`)
	userSet(t, h.ConfigMaps, ns, "relabelled-in", `{"metadata":{"labels":{"app":"web"}}}`)
	userSet(t, h.ConfigMaps, ns, "no-managed-fields", `{"metadata":{"managedFields":[{}]}}`)
	userSet(t, h.Namespaces, "", ns, `{"metadata":{"labels":{"env":"dev"}}}`)
	cm("missing", nil, nil)
	cm("legacy", map[string]string{"example.com/a": "1", "example.com/b": "2", "legacy": "y"}, nil)
	cm("foreign", map[string]string{"example.com/a": "1", "example.com/b": "2", "example.com/old": "user's", "team": "blue"}, nil)
	cm("converged-web", map[string]string{"example.com/a": "1", "example.com/b": "2", "example.com/web": "yes"},
		map[string]string{"app": "web", "tier": "frontend"})
	cm("wrong-label", map[string]string{"example.com/a": "1", "example.com/b": "2", "example.com/web": "yes"},
		map[string]string{"app": "web", "tier": "backend"})
	if mf := env.Get(t, h.ConfigMaps, ns, "no-managed-fields").GetManagedFields(); len(mf) != 0 {
		t.Fatalf("no-managed-fields still has managedFields %v", mf)
	}
}

// checkAsPredicted fails unless every object of prediction changed from
// before to after exactly as predicted, in its annotations and labels
// only, and every other object is byte-identical.
func checkAsPredicted(t *testing.T, before, after map[string]*unstructured.Unstructured, prediction map[string]predicted) {
	t.Helper()
	for name, was := range before {
		now, ok := after[name]
		if !ok {
			t.Errorf("%s: gone", name)
			continue
		}
		p, listed := prediction[name]
		if !listed {
			if a, b := mustMarshal(t, was.Object), mustMarshal(t, now.Object); a != b {
				t.Errorf("%s: not in diff, but changed:\n%s\nto\n%s", name, a, b)
			}
			continue
		}
		if got := changesBetween(was, now); !reflect.DeepEqual(got, p.Changes) {
			t.Errorf("%s: the controller changed\n%s\ndiff predicted\n%s", name, mustMarshal(t, got), mustMarshal(t, p.Changes))
		}
		if a, b := mustMarshal(t, withoutMetadata(was)), mustMarshal(t, withoutMetadata(now)); a != b {
			t.Errorf("%s: more than its metadata changed:\n%s\nto\n%s", name, a, b)
		}
	}
}

// startAgreeRun starts `kube-annotator run` with args and returns a stop
// that ends it and expects a clean exit; its log is shown if the test
// fails.
func startAgreeRun(t *testing.T, args ...string) (stop func()) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "run.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, append([]string{"run", "--kubeconfig", env.Kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	child, err := proc.StartChild("kube-annotator run", cmd)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		if err := child.Stop(10 * time.Second); err != nil {
			t.Errorf("kube-annotator run: %s", proc.ExitText(err))
		}
		logFile.Close()
		if t.Failed() {
			t.Logf("kube-annotator run log:\n%s", proc.LogTail(logPath, 50))
		}
	}
	t.Cleanup(stop)
	return stop
}

// listConfigMaps returns the ConfigMaps of ns by name.
func listConfigMaps(t *testing.T, ns string) map[string]*unstructured.Unstructured {
	t.Helper()
	list, err := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		out[list.Items[i].GetName()] = &list.Items[i]
	}
	return out
}

// waitPredicted waits until every object of prediction carries the keys it
// predicted, as changed from objects.
func waitPredicted(t *testing.T, ns string, objects map[string]*unstructured.Unstructured, prediction map[string]predicted) {
	t.Helper()
	var pending []string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		pending = nil
		now := listConfigMaps(t, ns)
		for name, p := range prediction {
			if !reflect.DeepEqual(changesBetween(objects[name], now[name]), p.Changes) {
				pending = append(pending, name)
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		t.Fatalf("the controller did not make what diff predicted within 30s; still differing: %v", pending)
	}
}

// changesBetween lists how the annotations and labels of was differ in
// now, in diff's order: annotations, then labels, each by key.
func changesBetween(was, now *unstructured.Unstructured) []change {
	var out []change
	for _, kind := range []struct {
		name     string
		was, now map[string]string
	}{{"annotation", was.GetAnnotations(), now.GetAnnotations()}, {"label", was.GetLabels(), now.GetLabels()}} {
		var keys []string
		for k := range kind.was {
			keys = append(keys, k)
		}
		for k := range kind.now {
			if _, ok := kind.was[k]; !ok {
				keys = append(keys, k)
			}
		}
		var these []change
		for _, k := range keys {
			old, hadOld := kind.was[k]
			next, hasNew := kind.now[k]
			if hadOld == hasNew && old == next {
				continue
			}
			c := change{Kind: kind.name, Key: k}
			if hadOld {
				c.Old = &old
			}
			if hasNew {
				c.New = &next
			}
			these = append(these, c)
		}
		slices.SortFunc(these, func(a, b change) int { return cmp.Compare(a.Key, b.Key) })
		out = append(out, these...)
	}
	return out
}

// withoutMetadata is u without what a metadata patch changes: its
// annotations, labels, managedFields and resourceVersion.
func withoutMetadata(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	for _, f := range []string{"annotations", "labels", "managedFields", "resourceVersion"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	return c.Object
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
