package controller

import (
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

func TestMetadataTransform(t *testing.T) {
	ours, theirs := entry(reconcile.FieldManager, "b"), entry("kubectl", "a")
	// Of our entries, what OwnedBy and relevantUpdate read; of other
	// managers' entries nothing, but the reconcile.OtherManagers marker
	// when there is no entry of ours, so that the cache tells an object
	// with managedFields from one without.
	kept := metav1.ManagedFieldsEntry{Manager: ours.Manager, Operation: ours.Operation, FieldsType: ours.FieldsType, FieldsV1: ours.FieldsV1}
	slim := func(managedFields ...metav1.ManagedFieldsEntry) *cachedMetadata {
		return &cachedMetadata{kind: &kindOf{gvk: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}},
			name: "x", namespace: "ns", uid: "u-1", resourceVersion: "7",
			labels: map[string]string{"l": "1"}, annotations: map[string]string{"a": "1"}, managedFields: managedFields}
	}
	tombstone := cache.DeletedFinalStateUnknown{Key: "ns/x", Obj: decoded()}
	tests := []struct {
		name     string
		in, want any
	}{
		{"ours and others'", decoded(theirs, ours, entry("kubelet"), ours), slim(kept, kept)},
		{"no entry of ours", decoded(theirs, entry("kubelet")), slim(otherManagersOnly...)},
		{"no managedFields", decoded(), slim()},
		{"transformed already: passes through", slim(kept), slim(kept)},
		{"tombstone passes through", tombstone, tombstone},
		{"not metadata", "x", "x"},
	}
	cm := rulestest.ConfigMaps
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := metadataTransform(reconcile.FieldManager, cm, nil, newInterner())(tc.in)
			if err != nil {
				t.Fatalf("metadataTransform() error = %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("metadataTransform() =\n%#v\nwant\n%#v", got, tc.want)
			}
		})
	}
	// The strings kept are shared, not the decoder's copies.
	decodedEntry := entry(string([]byte(reconcile.FieldManager)), "b")
	decodedEntry.Operation = metav1.ManagedFieldsOperationType([]byte("Update"))
	got, _ := metadataTransform(reconcile.FieldManager, cm, nil, newInterner())(decoded(decodedEntry))
	e := got.(*cachedMetadata).managedFields[0]
	if unsafe.StringData(e.Manager) != unsafe.StringData(reconcile.FieldManager) ||
		unsafe.StringData(string(e.Operation)) != unsafe.StringData(string(metav1.ManagedFieldsOperationUpdate)) {
		t.Errorf("the cached entry keeps the decoder's strings, want shared ones")
	}
}

func TestWholeObjectTransform(t *testing.T) {
	full := func(managedFields []any) *unstructured.Unstructured {
		md := map[string]any{"name": "x", "namespace": "ns", "generation": int64(2), "annotations": map[string]any{"a": "1"}}
		if managedFields != nil {
			md["managedFields"] = managedFields
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": md,
			"data": map[string]any{"k": "v"}, "status": map[string]any{"phase": "x"},
		}}
	}
	ours, theirs := owned(reconcile.FieldManager, "b")[0], owned("kubectl", "a")[0]
	others := map[string]any{"manager": reconcile.OtherManagers}
	tests := []struct {
		name     string
		in, want any
	}{
		{"others reduced to the marker", full([]any{theirs, ours, "junk", owned("kubelet")[0]}), full([]any{others, ours})},
		{"only others", full([]any{theirs}), full([]any{others})},
		{"no managedFields", full(nil), full(nil)},
		{"no metadata", &unstructured.Unstructured{Object: map[string]any{"kind": "X"}}, &unstructured.Unstructured{Object: map[string]any{"kind": "X"}}},
		{"not an object", "x", "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := wholeObjectTransform(reconcile.FieldManager)(tc.in)
			if err != nil {
				t.Fatalf("wholeObjectTransform() error = %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("wholeObjectTransform() =\n%#v\nwant\n%#v", got, tc.want)
			}
			if u, ok := tc.in.(*unstructured.Unstructured); ok && got != any(u) {
				t.Errorf("wholeObjectTransform() returned a new object, want the input modified in place")
			}
			// An informer that streams its initial list transforms each
			// object twice; an error there would make it list instead.
			if again, err := wholeObjectTransform(reconcile.FieldManager)(got); err != nil || !reflect.DeepEqual(again, tc.want) {
				t.Errorf("wholeObjectTransform() again = %#v, %v; want it unchanged", again, err)
			}
		})
	}
}

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
		{"no managedFields", untracked("ConfigMap", "ns", "x", anns)},
		{"others only", configMap("ns", "x", anns)},
		{"ours only", withOwned(untracked("ConfigMap", "ns", "x", anns), reconcile.FieldManager, "a", "stale")},
		{"ours and others", withOwned(withOwned(configMap("ns", "x", anns), "kubectl", "user"), reconcile.FieldManager, "a", "stale")},
		{"another manager owns what we set", withOwned(configMap("ns", "x", anns), "kubectl", "a", "stale")},
	}
	nsLabels := func(ns string) (metav1.Object, bool) {
		m, ok := map[string]*metav1.ObjectMeta{
			"ns":     {Name: "ns", Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"example.com/cost": "7"}},
			"prod-1": {Name: "prod-1", Labels: map[string]string{"team": "b", "env": "prod"}},
			"other":  {Name: "other", Annotations: map[string]string{rules.IgnoreAnnotation: "true"}},
		}[ns]
		return m, ok
	}
	nsIgnored := func(ns string) bool {
		m, ok := nsLabels(ns)
		return ok && rules.OptsOut(m.GetAnnotations())
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, rs := range decideRuleSets {
		tg := compile(t, rs.rules).Targets[configMaps]
		if rs.namespaces {
			tg = compile(t, rs.rules).Targets[namespaces]
		}
		t.Run(rs.name, func(t *testing.T) {
			for _, tc := range fixed {
				if rs.namespaces {
					break
				}
				t.Run(tc.name, func(t *testing.T) {
					tc.obj.Object["data"] = map[string]any{"b": "2"}
					checkCachedDecidesAsWhole(t, tg, tc.obj, nsLabels, nsIgnored)
				})
			}
			for i := range 500 {
				obj := randomObject(rng, rs.namespaces)
				if !checkCachedDecidesAsWhole(t, tg, obj, nsLabels, nsIgnored) {
					t.Fatalf("generated object %d: %s", i, mustJSON(obj.Object))
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
	u := untracked("ConfigMap", pick([]string{"ns", "prod-1", "kube-system", "other"}), pick([]string{"x1", "y1"}), keys(annKeys))
	if namespace {
		u = untracked("Namespace", "", pick([]string{"ns", "prod-1", "kube-system", "other"}), keys(annKeys))
	}
	u.SetLabels(keys(lblKeys))
	u.Object["data"] = map[string]any{"b": pick([]string{"1", "2"})}
	anns := u.GetAnnotations()
	if rng.IntN(10) == 0 {
		anns[rules.IgnoreAnnotation] = "true" // the object opts out
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
			mf = append(mf, ownedFields(manager, slices.Collect(maps.Keys(keys(annKeys))), slices.Collect(maps.Keys(keys(lblKeys)))))
		}
	}
	u.SetManagedFields(mf)
	return u
}

// ownedFields is a managedFields entry in which manager owns the
// annotation keys anns and the label keys lbls.
func ownedFields(manager string, anns, lbls []string) metav1.ManagedFieldsEntry {
	set := func(keys []string) map[string]any {
		m := map[string]any{}
		for _, k := range keys {
			m["f:"+k] = map[string]any{}
		}
		return m
	}
	raw := mustJSON(map[string]any{"f:metadata": map[string]any{"f:annotations": set(anns), "f:labels": set(lbls)}})
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(raw)}}
}

// checkCachedDecidesAsWhole reports whether obj, as the cache of tg keeps
// it, gets the decision obj gets, and whether that decision touches only
// keys the projection keeps or this controller owns.
func checkCachedDecidesAsWhole(t *testing.T, tg *rules.Target, obj *unstructured.Unstructured, nsLabels rules.Namespaces, nsIgnored rules.IgnoredNamespaces) bool {
	t.Helper()
	want, err := reconcile.Decide(tg, obj, nsLabels, nsIgnored, reconcile.FieldManager)
	if err != nil {
		t.Fatal(err)
	}
	got, err := reconcile.Decide(tg, asCached(t, tg, obj.DeepCopy()).(patch.Object), nsLabels, nsIgnored, reconcile.FieldManager)
	if err != nil {
		t.Fatal(err)
	}
	ok := true
	if !reflect.DeepEqual(got.Change, want.Change) || !reflect.DeepEqual(got.Requests, want.Requests) ||
		got.Ignored != want.Ignored || got.Owns != want.Owns || !reflect.DeepEqual(got.Audit, want.Audit) {
		t.Errorf("cached object: %v %v ignored %q owns %v audit %v\nwhole object: %v %v ignored %q owns %v audit %v",
			describe(got.Change), got.Requests, got.Ignored, got.Owns, got.Audit, describe(want.Change), want.Requests, want.Ignored, want.Owns, want.Audit)
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

func TestRelevantUpdate(t *testing.T) {
	cm := rulestest.ConfigMaps
	base := func(f func(m *metav1.PartialObjectMetadata)) any {
		m := decoded(entry("kubectl", "a"), entry(reconcile.FieldManager, "b"))
		if f != nil {
			f(m)
		}
		out, _ := metadataTransform(reconcile.FieldManager, cm, nil, newInterner())(m)
		return out
	}
	tests := []struct {
		name     string
		old, new any
		want     bool
	}{
		{"nothing that matters", base(nil), base(func(m *metav1.PartialObjectMetadata) {
			m.ResourceVersion = "8"
			m.Generation = 3
			m.ManagedFields[0] = entry("kubectl", "a", "c") // another manager's fields
			m.ManagedFields[1].Time = &metav1.Time{Time: metav1.Now().Add(1)}
		}), false},
		{"annotation value", base(nil), base(func(m *metav1.PartialObjectMetadata) { m.Annotations = map[string]string{"a": "2"} }), true},
		{"annotations gone", base(nil), base(func(m *metav1.PartialObjectMetadata) { m.Annotations = nil }), true},
		{"label added", base(nil), base(func(m *metav1.PartialObjectMetadata) { m.Labels["m"] = "2" }), true},
		{"our fields", base(nil), base(func(m *metav1.PartialObjectMetadata) { m.ManagedFields[1] = entry(reconcile.FieldManager, "b", "c") }), true},
		{"our entry gone", base(nil), base(func(m *metav1.PartialObjectMetadata) { m.ManagedFields = m.ManagedFields[:1] }), true},
		{"whole objects", configMap("ns", "x", nil), configMap("ns", "x", nil), true},
		{"old not metadata", "x", base(nil), true},
		{"tombstone", cache.DeletedFinalStateUnknown{Obj: base(nil)}, base(nil), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := relevantUpdate(tc.old, tc.new); got != tc.want {
				t.Errorf("relevantUpdate() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIsResync(t *testing.T) {
	at := func(rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x", ResourceVersion: rv}}
	}
	tests := []struct {
		name     string
		old, new any
		want     bool
	}{
		{"same version again", at("7"), at("7"), true},
		{"newer version", at("7"), at("8"), false},
		{"whole objects", configMap("ns", "x", nil), configMap("ns", "x", nil), true},
		{"not objects", "x", "x", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := isResync(tc.old, tc.new); got != tc.want {
				t.Errorf("isResync() = %v, want %v", got, tc.want)
			}
		})
	}
}

// An update that brings the same version again is a resync, enqueued only
// when resyncs are on; without them it comes from a relist, and the object
// has not changed.
func TestHandlerSameVersion(t *testing.T) {
	cm := rulestest.ConfigMaps
	obj, _ := metadataTransform(reconcile.FieldManager, cm, nil, newInterner())(decoded(entry(reconcile.FieldManager, "a")))
	for _, tc := range []struct {
		resync time.Duration
		want   int
	}{{0, 0}, {time.Hour, 1}} {
		c := newController(newClient(), Options{ResyncPeriod: tc.resync})
		t.Cleanup(c.queue.ShutDown)
		c.handlerFor(klog.Background(), configMaps).OnUpdate(obj, obj)
		if got := c.queue.Len(); got != tc.want {
			t.Errorf("--resync-period %v: %d keys queued, want %d", tc.resync, got, tc.want)
		}
	}
}
