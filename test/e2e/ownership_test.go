package e2e

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// metadataOf returns an object's annotations and labels.
func metadataOf(t *testing.T, gvr schema.GroupVersionResource, ns, name string) (map[string]string, map[string]string) {
	t.Helper()
	u := env.Get(t, gvr, ns, name)
	return u.GetAnnotations(), u.GetLabels()
}

// waitMetadata waits until check holds for the object's annotations and
// labels.
func waitMetadata(t *testing.T, timeout time.Duration, gvr schema.GroupVersionResource, ns, name, what string,
	check func(annotations, labels map[string]string) bool) {
	t.Helper()
	var a, l map[string]string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		u, err := env.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		a, l = u.GetAnnotations(), u.GetLabels()
		return check(a, l), nil
	})
	if err != nil {
		t.Fatalf("%s %s/%s: %s: not so after %v; annotations %v, labels %v", gvr.Resource, ns, name, what, timeout, a, l)
	}
}

// userSet patches annotations and labels as another field manager would.
func userSet(t *testing.T, gvr schema.GroupVersionResource, ns, name, body string) {
	t.Helper()
	_, err := env.Dynamic.Resource(gvr).Namespace(ns).Patch(t.Context(), name, types.MergePatchType, []byte(body),
		metav1.PatchOptions{FieldManager: "someone-else"})
	if err != nil {
		t.Fatalf("patch %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
}

// What the controller set goes away when no rule wants it — while it runs
// and across a restart — and what anyone else set is never touched.
func TestOwnership(t *testing.T) {
	ns := env.NewNamespace(t)
	cm := h.Object("v1", "ConfigMap", ns, "cm")
	cm.SetAnnotations(map[string]string{"user/note": "keep me", "stale": "user's"})
	cm.SetLabels(map[string]string{"app": "web", "tier": "user"})
	env.Create(t, h.ConfigMaps, ns, cm)

	two := `rules:
- name: base
  resources: [configmaps]
  annotations: {owned/a: "1"}
  labels: {owned-l: "x"}
- name: extra
  resources: [configmaps]
  annotations: {owned/b: "2"}
`
	one := `rules:
- name: base
  resources: [configmaps]
  annotations: {owned/a: "1"}
`
	rulesFile := writeFile(t, "rules.yaml", two)
	p := startRun(t, "--rules", rulesFile, "-n", ns)
	waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "cm", "all owned keys set", func(a, l map[string]string) bool {
		return a["owned/a"] == "1" && a["owned/b"] == "2" && l["owned-l"] == "x"
	})
	// Someone else sets a key and changes labels afterwards.
	userSet(t, h.ConfigMaps, ns, "cm", `{"metadata":{"annotations":{"later/by-user":"v"},"labels":{"later":"yes"}}}`)
	userAnns := map[string]string{"user/note": "keep me", "stale": "user's", "later/by-user": "v"}
	userLabels := map[string]string{"app": "web", "tier": "user", "later": "yes"}

	t.Run("a removed rule's keys disappear while running", func(t *testing.T) {
		replaceFile(t, rulesFile, `rules:
- name: base
  resources: [configmaps]
  annotations: {owned/a: "1"}
  labels: {owned-l: "x"}
`)
		waitMetadata(t, 5*time.Second, h.ConfigMaps, ns, "cm", "owned/b removed", func(a, _ map[string]string) bool {
			_, ok := a["owned/b"]
			return !ok && a["owned/a"] == "1"
		})
	})

	// The restarted process belongs to the whole test, not to a subtest.
	p.Terminate(t)
	replaceFile(t, rulesFile, one)
	p = startRun(t, "--rules", rulesFile, "-n", ns)
	t.Run("and while it is stopped", func(t *testing.T) {
		waitMetadata(t, 15*time.Second, h.ConfigMaps, ns, "cm", "owned-l removed after restart", func(_, l map[string]string) bool {
			_, ok := l["owned-l"]
			return !ok
		})
	})

	t.Run("keys of others are byte-equal", func(t *testing.T) {
		a, l := metadataOf(t, h.ConfigMaps, ns, "cm")
		for k, v := range userAnns {
			if a[k] != v {
				t.Errorf("annotation %s = %q, want %q untouched", k, a[k], v)
			}
		}
		if want := map[string]string{"user/note": "keep me", "stale": "user's", "later/by-user": "v", "owned/a": "1"}; !reflect.DeepEqual(a, want) {
			t.Errorf("annotations = %v, want %v", a, want)
		}
		if !reflect.DeepEqual(l, userLabels) {
			t.Errorf("labels = %v, want %v", l, userLabels)
		}
	})

	t.Run("a key another manager took over is theirs", func(t *testing.T) {
		userSet(t, h.ConfigMaps, ns, "cm", `{"metadata":{"annotations":{"owned/a":"mine now"}}}`)
		waitMetadata(t, 5*time.Second, h.ConfigMaps, ns, "cm", "owned/a reverted (a rule still names it)", func(a, _ map[string]string) bool {
			return a["owned/a"] == "1"
		})
	})

	t.Run("steady state", func(t *testing.T) {
		env.Quiet(t, 10*time.Second, "configmaps")
	})
}

// Selection by label selector, names, namespaces and namespace labels; the
// other actions; values read from the object.
func TestSelectorsAndActions(t *testing.T) {
	nsA, nsB := env.NewNamespace(t), env.NewNamespace(t)
	userSet(t, h.Namespaces, "", nsA, `{"metadata":{"labels":{"env":"prod"}}}`)
	mk := func(ns, name string, labels map[string]string, annotations map[string]string) {
		o := h.Object("v1", "ConfigMap", ns, name)
		o.SetLabels(labels)
		o.SetAnnotations(annotations)
		env.Create(t, h.ConfigMaps, ns, o)
	}
	mk(nsA, "web-1", map[string]string{"app": "web", "team": "blue"}, map[string]string{"legacy": "x", "keep": "y"})
	mk(nsA, "db-1", map[string]string{"app": "db"}, nil)
	mk(nsB, "web-2", map[string]string{"app": "web", "team": "green"}, map[string]string{"legacy": "x"})

	// The record is a ConfigMap too, in a namespace of its own: the
	// not-b rule leaves it out, so that the record's writes are not
	// followed by writes of the rule in the steady state.
	recordNS := recordNamespace(t)
	rulesFile := writeFile(t, "rules.yaml", `rules:
- name: web
  resources: [configmaps]
  selector: app=web
  annotations:
    selected/by: selector
    selected/team: {jsonPath: '{.metadata.labels.team}'}
  labels: {role: frontend}
  removeAnnotations: [legacy]
- name: names
  resources: [configmaps]
  names: ["db-*"]
  annotations: {selected/name: "db"}
  removeLabels: [app]
- name: prod
  resources: [configmaps]
  namespaceSelector: env=prod
  annotations: {selected/env: prod}
- name: not-b
  resources: [configmaps]
  namespaces: ["e2e-*"]
  excludeNamespaces: [`+nsB+`, `+recordNS+`]
  annotations: {selected/ns: "yes"}
`)
	p := startRun(t, "--rules", rulesFile, "--events")
	waitMetadata(t, 15*time.Second, h.ConfigMaps, nsA, "web-1", "web rule, prod and not-b applied", func(a, l map[string]string) bool {
		_, legacy := a["legacy"]
		return a["selected/by"] == "selector" && a["selected/team"] == "blue" && l["role"] == "frontend" &&
			!legacy && a["keep"] == "y" && a["selected/env"] == "prod" && a["selected/ns"] == "yes"
	})
	waitMetadata(t, 30*time.Second, h.ConfigMaps, nsB, "web-2", "web rule applied; prod and not-b not", func(a, _ map[string]string) bool {
		_, env := a["selected/env"]
		_, ns := a["selected/ns"]
		return a["selected/team"] == "green" && !env && !ns
	})
	waitMetadata(t, 5*time.Second, h.ConfigMaps, nsA, "db-1", "names rule applied, web not", func(a, l map[string]string) bool {
		_, app := l["app"]
		_, web := a["selected/by"]
		return a["selected/name"] == "db" && !app && !web
	})

	t.Run("relabelled out of the selector, then back", func(t *testing.T) {
		userSet(t, h.ConfigMaps, nsA, "web-1", `{"metadata":{"labels":{"app":"api"}}}`)
		waitMetadata(t, 5*time.Second, h.ConfigMaps, nsA, "web-1", "web rule's keys gone", func(a, l map[string]string) bool {
			_, by := a["selected/by"]
			_, team := a["selected/team"]
			_, role := l["role"]
			return !by && !team && !role && a["selected/env"] == "prod"
		})
		userSet(t, h.ConfigMaps, nsA, "web-1", `{"metadata":{"labels":{"app":"web","team":"red"}}}`)
		waitMetadata(t, 5*time.Second, h.ConfigMaps, nsA, "web-1", "web rule's keys back, team read anew", func(a, l map[string]string) bool {
			return a["selected/by"] == "selector" && a["selected/team"] == "red" && l["role"] == "frontend"
		})
	})

	t.Run("namespace relabelled out of the namespaceSelector", func(t *testing.T) {
		userSet(t, h.Namespaces, "", nsA, `{"metadata":{"labels":{"env":"dev"}}}`)
		waitMetadata(t, 5*time.Second, h.ConfigMaps, nsA, "web-1", "prod rule's key gone", func(a, _ map[string]string) bool {
			_, ok := a["selected/env"]
			return !ok
		})
	})

	t.Run("a missing field sets nothing", func(t *testing.T) {
		mk(nsB, "web-3", map[string]string{"app": "web"}, nil)
		waitMetadata(t, 5*time.Second, h.ConfigMaps, nsB, "web-3", "selected/by set, selected/team not", func(a, _ map[string]string) bool {
			_, team := a["selected/team"]
			return a["selected/by"] == "selector" && !team
		})
	})

	t.Run("steady state", func(t *testing.T) {
		env.Quiet(t, 10*time.Second, "configmaps")
	})
	_ = p
}

// Two rules that apply to every object and disagree are rejected at load.
func TestConflictRejected(t *testing.T) {
	rulesFile := writeFile(t, "rules.yaml", `rules:
- name: first
  resources: [configmaps]
  annotations: {team: a}
- name: second
  resources: [cm]
  annotations: {team: b}
`)
	_, stderr, code := runCLI(t, "run", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig)
	want := `rules[1].annotations.team: conflicts with rules[0] (first), which also applies to every object of configmaps.v1: annotation "team" is "b" here (second) and "a" there`
	if code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("run: exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
}
