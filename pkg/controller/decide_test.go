package controller

import (
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// TestCachedDecidesAsWhole checks that what either cache keeps of an
// object — a projection of its annotations and labels, or the whole
// object when a rule reads it — gets the decision the whole object gets,
// as once and diff see it: the cache keeps every key the rules set,
// remove or select by, and every key the controller owns, so that a key
// outside those is never written or deleted. Each rule set is tried on a
// table of objects and on generated ones.
func TestCachedDecidesAsWhole(t *testing.T) {
	anns := map[string]string{"a": "0", "b": "2", "stale": "s", "user": "u"}
	fixed := []struct {
		name string
		obj  *unstructured.Unstructured
	}{
		{"no managedFields", fixture.Untracked("ConfigMap", "ns", "x", anns)},
		{"others only", fixture.ConfigMap("ns", "x", anns)},
		{"ours only", fixture.WithOwned(fixture.Untracked("ConfigMap", "ns", "x", anns), reconcile.FieldManager, "a", "stale")},
		{"ours and others", fixture.WithOwned(fixture.WithOwned(fixture.ConfigMap("ns", "x", anns), "kubectl", "user"), reconcile.FieldManager, "a", "stale")},
		{"another manager owns what we set", fixture.WithOwned(fixture.ConfigMap("ns", "x", anns), "kubectl", "a", "stale")},
	}
	nsLabels := source.Namespaces(func(ns string) (metav1.Object, bool) {
		m, ok := map[string]*metav1.ObjectMeta{
			"ns":     {Name: "ns", Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"example.com/cost": "7"}},
			"prod-1": {Name: "prod-1", Labels: map[string]string{"team": "b", "env": "prod"}},
			"other":  {Name: "other", Annotations: map[string]string{rulefile.IgnoreAnnotation: "true"}},
		}[ns]
		return m, ok
	})
	rng := rand.New(rand.NewPCG(1, 2))
	for _, rs := range decideRuleSets {
		tg := fixture.Compile(t, rs.rules).Targets[configMaps]
		if rs.namespaces {
			tg = fixture.Compile(t, rs.rules).Targets[namespaces]
		}
		t.Run(rs.name, func(t *testing.T) {
			for _, tc := range fixed {
				if rs.namespaces {
					break
				}
				t.Run(tc.name, func(t *testing.T) {
					tc.obj.Object["data"] = map[string]any{"b": "2"}
					checkCachedDecidesAsWhole(t, tg, tc.obj, nsLabels)
				})
			}
			for i := range 500 {
				obj := randomObject(rng, rs.namespaces)
				if !checkCachedDecidesAsWhole(t, tg, obj, nsLabels) {
					t.Fatalf("generated object %d: %s", i, testutil.MustJSON(obj.Object))
				}
			}
		})
	}
}

// decideRuleSets are the rules TestCachedDecidesAsWhole decides under.
var decideRuleSets = []struct {
	name, rules string
	namespaces  bool // the rules are tried on Namespaces, else on ConfigMaps
}{
	{"literal", "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1', b: '2'}, labels: {l: x}}\n", false},
	{"reads the object", "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1', b: {jsonPath: '{.data.b}'}}, labels: {l: x}}\n", false},
	{"removes", "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}, removeAnnotations: [stale, user], removeLabels: [legacy]}\n", false},
	{"selects by labels", "rules:\n- {name: r, resources: [configmaps], selector: 'app=web,!canary', annotations: {team: a}}\n", false},
	{"selects by a set of values", "rules:\n- {name: r, resources: [configmaps], selector: 'tier in (1,2)', annotations: {team: a}}\n", false},
	{"selects by a label it sets", "rules:\n- {name: r, resources: [configmaps], selector: 'env notin (dev)', labels: {env: prod, l: x}}\n", false},
	{"selective rules conflict", "rules:\n- {name: one, resources: [configmaps], selector: app=web, annotations: {team: a}}\n" +
		"- {name: two, resources: [configmaps], names: ['x*'], annotations: {team: b}, removeLabels: [app]}\n", false},
	{"namespaces", "rules:\n- {name: r, resources: [configmaps], namespaces: ['prod-*', ns], excludeNamespaces: [ns], annotations: {a: '1'}}\n" +
		"- {name: s, resources: [configmaps], namespaceSelector: team=a, labels: {l: x}}\n", false},
	{"values from the namespace", "rules:\n- {name: r, resources: [configmaps], annotations: {cost: {fromNamespace: {annotation: example.com/cost}}}, labels: {team: {fromNamespace: {label: team}}}}\n", false},
	{"audit mode", "rules:\n- {name: r, resources: [configmaps], mode: audit, annotations: {a: '1'}, removeLabels: [legacy]}\n" +
		"- {name: s, resources: [configmaps], annotations: {b: '2'}}\n", false},
	{"a Namespace selected by its own labels", "rules:\n- {name: r, resources: [namespaces], namespaceSelector: 'env in (prod),!canary', annotations: {a: '1'}, labels: {l: x}}\n", true},
	{"a Namespace reads its own keys", "rules:\n- {name: r, resources: [namespaces], annotations: {a: {fromNamespace: {label: tier}}}, labels: {l: {fromNamespace: {annotation: b}}}}\n", true},
}

// randomObject returns a ConfigMap, or a Namespace, with keys drawn from
// those the rule sets name and others, some of them owned by this
// controller, others by other managers.
func randomObject(rng *rand.Rand, namespace bool) *unstructured.Unstructured {
	pick := func(pool []string) string { return pool[rng.IntN(len(pool))] }
	keys := func(pool []string) map[string]string {
		m := map[string]string{}
		for range rng.IntN(len(pool) + 1) {
			m[pick(pool)] = pick([]string{"1", "2", "web", "prod", "dev"})
		}
		return m
	}
	annKeys := []string{"a", "b", "team", "stale", "user", "kubectl.kubernetes.io/last-applied-configuration", "meta.helm.sh/release-name"}
	lblKeys := []string{"l", "app", "canary", "tier", "env", "legacy", "app.kubernetes.io/name", "helm.sh/chart"}
	u := fixture.Untracked("ConfigMap", pick([]string{"ns", "prod-1", "kube-system", "other"}), pick([]string{"x1", "y1"}), keys(annKeys))
	if namespace {
		u = fixture.Untracked("Namespace", "", pick([]string{"ns", "prod-1", "kube-system", "other"}), keys(annKeys))
	}
	u.SetLabels(keys(lblKeys))
	u.Object["data"] = map[string]any{"b": pick([]string{"1", "2"})}
	anns := u.GetAnnotations()
	if rng.IntN(10) == 0 {
		anns[rulefile.IgnoreAnnotation] = "true" // the object opts out
	}
	if rng.IntN(4) == 0 { // an admission policy set keys, and listed them
		gr := configMaps.GroupResource()
		if namespace {
			gr = namespaces.GroupResource()
		}
		listed := slices.Collect(maps.Keys(keys(annKeys)))
		for k := range keys(lblKeys) {
			listed = append(listed, patch.MarkerLabel+k)
		}
		anns[patch.MarkerKey(reconcile.FieldManager, gr)] = strings.Join(listed, ",")
	}
	u.SetAnnotations(anns)
	var mf []metav1.ManagedFieldsEntry
	for _, manager := range []string{"kubectl-client-side-apply", reconcile.FieldManager, "helm"} {
		if rng.IntN(2) == 0 {
			mf = append(mf, fixture.OwnedFields(manager, slices.Collect(maps.Keys(keys(annKeys))), slices.Collect(maps.Keys(keys(lblKeys)))))
		}
	}
	u.SetManagedFields(mf)
	return u
}

// checkCachedDecidesAsWhole reports whether obj, as the cache of tg keeps
// it, gets the decision obj gets, and whether that decision touches only
// keys the projection keeps or this controller owns.
func checkCachedDecidesAsWhole(t *testing.T, tg *rules.Target, obj *unstructured.Unstructured, look source.Lookup) bool {
	t.Helper()
	want, err := reconcile.Decide(tg, obj, look, reconcile.FieldManager)
	if err != nil {
		t.Fatal(err)
	}
	got, err := reconcile.Decide(tg, asCached(t, tg, obj.DeepCopy()).(patch.Object), look, reconcile.FieldManager)
	if err != nil {
		t.Fatal(err)
	}
	ok := true
	if !reflect.DeepEqual(got.Change, want.Change) || !reflect.DeepEqual(got.Requests, want.Requests) ||
		got.Ignored != want.Ignored || got.Owns != want.Owns || !reflect.DeepEqual(got.Audit, want.Audit) {
		t.Errorf("cached object: %v %v ignored %q owns %v audit %v\nwhole object: %v %v ignored %q owns %v audit %v",
			got.Change.Summary(), got.Requests, got.Ignored, got.Owns, got.Audit, want.Change.Summary(), want.Requests, want.Ignored, want.Owns, want.Audit)
		ok = false
	}
	marker := patch.MarkerKey(reconcile.FieldManager, tg.GVR.GroupResource())
	p := tg.Projection()
	owned := patch.OwnedBy(obj.GetManagedFields(), reconcile.FieldManager).Union(patch.MarkedKeys(obj.GetAnnotations(), marker))
	for kind, keys := range map[string]struct {
		changed     map[string]*string
		kept, owned func(string) bool
	}{
		"annotation": {want.Change.Annotations, p.Annotations.Has, func(k string) bool { return owned.Annotations[k] || k == marker }},
		"label":      {want.Change.Labels, p.Labels.Has, func(k string) bool { return owned.Labels[k] }},
	} {
		for k := range keys.changed {
			if !keys.kept(k) && !keys.owned(k) {
				t.Errorf("%s %q changed, but the rules do not name it and we do not own it", kind, k)
				ok = false
			}
		}
	}
	return ok
}
