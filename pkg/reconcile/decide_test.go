package reconcile

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

var (
	configMaps = rulestest.ConfigMaps.GVR
	namespaces = rulestest.Namespaces.GVR
)

// target compiles a rules file's content for a cluster that serves
// configmaps and namespaces, without the cluster's own namespaces, and
// returns its first target.
func target(t *testing.T, content string) *rules.Target {
	t.Helper()
	return rulestest.Compile(t, content, rulestest.ConfigMaps, rulestest.Namespaces).SortedTargets()[0]
}

// entry is a managedFields entry in which manager owns the annotation keys
// anns and the label keys lbls.
func entry(manager string, anns, lbls []string) metav1.ManagedFieldsEntry {
	set := func(keys []string) map[string]any {
		m := map[string]any{}
		for _, k := range keys {
			m["f:"+k] = map[string]any{}
		}
		return m
	}
	md := map[string]any{"f:annotations": set(anns), "f:labels": set(lbls)}
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(testutil.MustJSON(map[string]any{"f:metadata": md}))}}
}

// obj is a ConfigMap's metadata at resourceVersion "3" as a metadata
// client reads it, with its TypeMeta set as a cache sets it.
func obj(namespace, name string, anns, lbls map[string]string, managedFields ...metav1.ManagedFieldsEntry) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, ResourceVersion: "3",
			Annotations: anns, Labels: lbls, ManagedFields: managedFields},
	}
}

var kubectl = entry("kubectl", nil, nil)

// marker is the admission marker of FieldManager for configmaps.
const marker = "configmaps.admission.kube-annotator.io/kube-annotator"

func merge(body string) []patch.Request {
	return []patch.Request{{Type: types.MergePatchType, Body: []byte(body)}}
}

func TestDecide(t *testing.T) {
	const ab = "rules:\n- {name: ab, resources: [configmaps], annotations: {a: '1', b: '2'}}\n"
	const teams = "rules:\n- {name: one, resources: [configmaps], selector: app=web, annotations: {team: a}}\n" +
		"- {name: two, resources: [configmaps], names: ['x*'], annotations: {team: b}}\n"
	nsLabels := source.Namespaces(func(ns string) (metav1.Object, bool) {
		l, ok := map[string]labels.Set{"ns-a": {"team": "a"}}[ns]
		return &metav1.ObjectMeta{Name: ns, Labels: l}, ok
	})
	tests := []struct {
		name          string
		rules         string
		obj           patch.Object
		want          patch.Change
		wantRequests  []patch.Request
		wantConflicts int
	}{
		{name: "missing keys", rules: ab, obj: obj("ns", "x", nil, nil, kubectl),
			want:         patch.Change{Annotations: map[string]*string{"a": ptr.To("1"), "b": ptr.To("2")}},
			wantRequests: merge(`{"metadata":{"annotations":{"a":"1","b":"2"}}}`)},
		{name: "only the keys that differ; others untouched", rules: ab,
			obj:          obj("ns", "x", map[string]string{"a": "0", "b": "2", "user": "u"}, nil, kubectl),
			want:         patch.Change{Annotations: map[string]*string{"a": ptr.To("1")}},
			wantRequests: merge(`{"metadata":{"annotations":{"a":"1"}}}`)},
		{name: "converged", rules: ab, obj: obj("ns", "x", map[string]string{"a": "1", "b": "2"}, nil, kubectl)},
		{name: "a key we own that no rule wants is deleted", rules: ab,
			obj: obj("ns", "x", map[string]string{"a": "1", "b": "2", "old": "o"}, map[string]string{"gone": "g"},
				kubectl, entry(FieldManager, []string{"a", "old"}, []string{"gone"})),
			want:         patch.Change{Annotations: map[string]*string{"old": nil}, Labels: map[string]*string{"gone": nil}},
			wantRequests: merge(`{"metadata":{"annotations":{"old":null},"labels":{"gone":null}}}`)},
		{name: "a key another manager owns is kept", rules: ab,
			obj: obj("ns", "x", map[string]string{"a": "1", "b": "2", "old": "o"}, nil, entry("kubectl", []string{"old"}, nil))},
		{name: "ownership is the deciding manager's only", rules: ab,
			obj: obj("ns", "x", map[string]string{"a": "1", "b": "2", "old": "o"}, nil, entry("someone", []string{"old"}, nil), entry(OtherManagers, nil, nil))},
		{name: "excluded namespace: only our keys deleted", rules: ab,
			obj:          obj("kube-system", "x", map[string]string{"a": "1", "user": "u"}, nil, entry(FieldManager, []string{"a"}, nil)),
			want:         patch.Change{Annotations: map[string]*string{"a": nil}},
			wantRequests: merge(`{"metadata":{"annotations":{"a":null}}}`)},
		{name: "labels set and removed",
			rules:        "rules:\n- {name: r, resources: [configmaps], labels: {tier: web}, removeLabels: [legacy]}\n",
			obj:          obj("ns", "x", nil, map[string]string{"legacy": "y", "app": "a"}, kubectl),
			want:         patch.Change{Labels: map[string]*string{"tier": ptr.To("web"), "legacy": nil}},
			wantRequests: merge(`{"metadata":{"labels":{"legacy":null,"tier":"web"}}}`)},
		{name: "namespace selected by its labels",
			rules:        "rules:\n- {name: r, resources: [configmaps], namespaceSelector: team=a, annotations: {a: '1'}}\n",
			obj:          obj("ns-a", "x", nil, nil, kubectl),
			want:         patch.Change{Annotations: map[string]*string{"a": ptr.To("1")}},
			wantRequests: merge(`{"metadata":{"annotations":{"a":"1"}}}`)},
		{name: "namespace not selected",
			rules: "rules:\n- {name: r, resources: [configmaps], namespaceSelector: team=a, annotations: {a: '1'}}\n",
			obj:   obj("ns-b", "x", nil, nil, kubectl)},
		{name: "no managedFields: server-side apply pinned to the resourceVersion, then the deletions",
			rules: "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}, removeAnnotations: [old]}\n",
			obj:   obj("ns", "x", map[string]string{"old": "o"}, nil),
			want:  patch.Change{Annotations: map[string]*string{"a": ptr.To("1"), "old": nil}},
			wantRequests: []patch.Request{
				{Type: types.ApplyPatchType, Force: true,
					Body: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns","resourceVersion":"3","annotations":{"a":"1"}}}`)},
				{Type: types.MergePatchType, Body: []byte(`{"metadata":{"annotations":{"old":null}}}`)},
			}},
		{name: "the OtherManagers marker is managedFields", rules: ab, obj: obj("ns", "x", nil, nil, metav1.ManagedFieldsEntry{Manager: OtherManagers}),
			want:         patch.Change{Annotations: map[string]*string{"a": ptr.To("1"), "b": ptr.To("2")}},
			wantRequests: merge(`{"metadata":{"annotations":{"a":"1","b":"2"}}}`)},
		{name: "whole object", rules: ab, obj: whole(obj("ns", "x", map[string]string{"b": "2"}, nil, kubectl)),
			want:         patch.Change{Annotations: map[string]*string{"a": ptr.To("1")}},
			wantRequests: merge(`{"metadata":{"annotations":{"a":"1"}}}`)},
		{name: "set at admission, wanted by a rule in audit mode: kept",
			rules: "rules:\n- {name: r, resources: [configmaps], mode: audit, annotations: {a: '1'}}\n",
			obj:   obj("ns", "x", map[string]string{"a": "1", marker: "a"}, nil, kubectl)},
		{name: "set at admission, the object opts out: left alone", rules: "rules:\n- {name: r, resources: [configmaps], labels: {l: x}}\n",
			obj: obj("ns", "x", map[string]string{"a": "1", marker: "a", rulefile.IgnoreAnnotation: "true"}, nil, kubectl)},
		{name: "set at admission and still wanted: no write", rules: ab,
			obj: obj("ns", "x", map[string]string{"a": "1", "b": "2", marker: "a,b"}, nil, kubectl)},
		{name: "set at admission, no rule wants it: deleted with the marker",
			rules: "rules:\n- {name: r, resources: [configmaps], labels: {l: x}}\n",
			obj: obj("ns", "x", map[string]string{"a": "1", "user": "u", marker: "a,label:gone,label:l"}, map[string]string{"gone": "g", "l": "x"},
				entry("kubectl", []string{"a", "user"}, []string{"gone"})),
			want:         patch.Change{Annotations: map[string]*string{"a": nil, marker: ptr.To("label:l")}, Labels: map[string]*string{"gone": nil}},
			wantRequests: merge(`{"metadata":{"annotations":{"a":null,"configmaps.admission.kube-annotator.io/kube-annotator":"label:l"},"labels":{"gone":null}}}`)},
		{name: "another field manager's marker, or another resource's, is not ours", rules: ab,
			obj: obj("ns", "x", map[string]string{"a": "1", "b": "2", "old": "o", "configmaps.admission.kube-annotator.io/other": "old", "deployments.apps.admission.kube-annotator.io/kube-annotator": "old"}, nil, kubectl)},
		{name: "rules conflict: file order decides", rules: teams,
			obj:           obj("ns", "x", nil, map[string]string{"app": "web"}, kubectl),
			want:          patch.Change{Annotations: map[string]*string{"team": ptr.To("a")}},
			wantRequests:  merge(`{"metadata":{"annotations":{"team":"a"}}}`),
			wantConflicts: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := testutil.MustJSON(tc.obj)
			d, err := Decide(target(t, tc.rules), tc.obj, nsLabels, FieldManager)
			if err != nil {
				t.Fatalf("Decide() error = %v", err)
			}
			if !reflect.DeepEqual(d.Change, tc.want) {
				t.Errorf("Change = %s, want %s", testutil.MustJSON(d.Change), testutil.MustJSON(tc.want))
			}
			if d.Empty() != tc.want.Empty() {
				t.Errorf("Empty() = %v, want %v", d.Empty(), tc.want.Empty())
			}
			if !reflect.DeepEqual(d.Requests, tc.wantRequests) {
				t.Errorf("Requests = %s, want %s", requests(d.Requests), requests(tc.wantRequests))
			}
			if d.Evaluation == nil || len(d.Evaluation.Conflicts) != tc.wantConflicts {
				t.Errorf("Evaluation = %+v, want %d conflicts", d.Evaluation, tc.wantConflicts)
			}
			if after := testutil.MustJSON(tc.obj); after != before {
				t.Errorf("Decide() modified the object:\n%s\nwas\n%s", after, before)
			}
		})
	}
}

// TestDecideTrimmed checks the promise of OtherManagers: an object whose
// managedFields keep only the deciding manager's entries, or the marker
// when it has none, gets the Decision the whole object gets.
func TestDecideTrimmed(t *testing.T) {
	const rulesAB = "rules:\n- {name: ab, resources: [configmaps], annotations: {a: '1', b: '2'}}\n"
	ours := entry(FieldManager, []string{"a", "old"}, nil)
	theirs := entry("kubectl", []string{"b", "user"}, nil)
	anns := map[string]string{"a": "0", "old": "o", "user": "u", "adm": "x", marker: "adm,user"}
	tests := []struct {
		name          string
		managedFields []metav1.ManagedFieldsEntry
	}{
		{"none", nil},
		{"others only", []metav1.ManagedFieldsEntry{theirs, entry("kubelet", nil, nil)}},
		{"ours only", []metav1.ManagedFieldsEntry{ours}},
		{"ours and others", []metav1.ManagedFieldsEntry{theirs, ours, entry("kubelet", nil, nil)}},
	}
	tg := target(t, rulesAB)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			full, err := Decide(tg, obj("ns", "x", anns, nil, tc.managedFields...), nil, FieldManager)
			if err != nil {
				t.Fatal(err)
			}
			trimmed, err := Decide(tg, obj("ns", "x", anns, nil, trim(tc.managedFields)...), nil, FieldManager)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(full, trimmed) {
				t.Errorf("trimmed object: %s %s, whole object: %s %s",
					testutil.MustJSON(trimmed.Change), requests(trimmed.Requests), testutil.MustJSON(full.Change), requests(full.Requests))
			}
		})
	}
}

// trim keeps of managedFields what OtherManagers says a cache may keep.
func trim(managedFields []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, e := range managedFields {
		if e.Manager == FieldManager {
			out = append(out, e)
		}
	}
	if out == nil && len(managedFields) > 0 {
		out = []metav1.ManagedFieldsEntry{{Manager: OtherManagers}}
	}
	return out
}

// whole returns m as a whole object, as a dynamic client reads it.
func whole(m *metav1.PartialObjectMetadata) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"k": "v"}}}
	u.SetAPIVersion(m.APIVersion)
	u.SetKind(m.Kind)
	u.SetNamespace(m.Namespace)
	u.SetName(m.Name)
	u.SetResourceVersion(m.ResourceVersion)
	u.SetAnnotations(m.Annotations)
	u.SetLabels(m.Labels)
	u.SetManagedFields(m.ManagedFields)
	return u
}

// A pruned resource's target deletes the keys the manager owns, and
// nothing else; Owns says whether the manager owns keys, changed or not.
func TestDecidePruneAndOwns(t *testing.T) {
	const ab = "rules:\n- {name: ab, resources: [configmaps], annotations: {a: '1', b: '2'}}\n"
	pruned := Prune(source.Resource{GVR: configMaps, Kind: "ConfigMap", Namespaced: true})
	anns := map[string]string{"a": "1", "b": "2", "user": "u"}
	lbls := map[string]string{"tier": "web", "app": "x"}
	ours := entry(FieldManager, []string{"a", "b"}, []string{"tier"})
	theirs := entry("kubectl", []string{"user"}, []string{"app"})
	tests := []struct {
		name     string
		target   *rules.Target
		obj      patch.Object
		want     patch.Change
		wantOwns bool
	}{
		{name: "pruned: our keys deleted, theirs kept", target: pruned, obj: obj("ns", "x", anns, lbls, theirs, ours),
			want:     patch.Change{Annotations: map[string]*string{"a": nil, "b": nil}, Labels: map[string]*string{"tier": nil}},
			wantOwns: true},
		{name: "pruned in an excluded namespace too", target: pruned, obj: obj("kube-system", "x", anns, lbls, ours),
			want:     patch.Change{Annotations: map[string]*string{"a": nil, "b": nil}, Labels: map[string]*string{"tier": nil}},
			wantOwns: true},
		{name: "pruned: nothing of ours", target: pruned, obj: obj("ns", "x", anns, lbls, theirs)},
		{name: "pruned: no managedFields", target: pruned, obj: obj("ns", "x", anns, lbls)},
		{name: "pruned: keys ours no longer on the object", target: pruned, obj: obj("ns", "x", map[string]string{"user": "u"}, nil, ours)},
		{name: "pruned: an object that opts out is left alone, but its keys still count", target: pruned,
			obj: obj("ns", "x", map[string]string{"a": "1", rulefile.IgnoreAnnotation: "true"}, lbls, ours), wantOwns: true},
		{name: "ruled and converged, keys ours", target: target(t, ab), obj: obj("ns", "x", anns, nil, ours), wantOwns: true},
		{name: "ruled and converged, keys theirs", target: target(t, ab), obj: obj("ns", "x", anns, nil, theirs)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decide(tc.target, tc.obj, nil, FieldManager)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d.Change, tc.want) || d.Owns != tc.wantOwns {
				t.Errorf("Change = %s, Owns %v; want %s, %v", testutil.MustJSON(d.Change), d.Owns, testutil.MustJSON(tc.want), tc.wantOwns)
			}
		})
	}
}
