package scan

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

const manager = reconcile.FieldManager

var (
	configMaps = rulestest.ConfigMaps.GVR
	namespaces = rulestest.Namespaces.GVR
	// served are the resources the tests' cluster serves.
	served = []source.Resource{rulestest.ConfigMaps, rulestest.Namespaces, rulestest.Pods}
)

// object returns an object of kind with annotations ann and labels lbl,
// as kubectl created it, on which the field manager set the annotations
// keys ours.
func object(kind, namespace, name string, ann, lbl map[string]string, ours ...string) *unstructured.Unstructured {
	u := untracked(kind, namespace, name, ann, lbl)
	mf := []any{map[string]any{"manager": "kubectl", "operation": "Update"}}
	if len(ours) > 0 {
		fields := map[string]any{}
		for _, k := range ours {
			fields["f:"+k] = map[string]any{}
		}
		mf = append(mf, map[string]any{
			"manager": manager, "operation": "Update",
			"fieldsV1": map[string]any{"f:metadata": map[string]any{"f:annotations": fields}},
		})
	}
	u.Object["metadata"].(map[string]any)["managedFields"] = mf
	return u
}

// untracked returns an object without managedFields, whose ownership the
// API server does not track.
func untracked(kind, namespace, name string, ann, lbl map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetResourceVersion("3")
	u.SetAnnotations(ann)
	u.SetLabels(lbl)
	return u
}

// merge is the request that makes a change with a merge patch.
func merge(body string) []patch.Request {
	return []patch.Request{{Type: types.MergePatchType, Body: []byte(body)}}
}

func cm(namespace, name string, ann map[string]string, ours ...string) *unstructured.Unstructured {
	return object("ConfigMap", namespace, name, ann, nil, ours...)
}

func TestPending(t *testing.T) {
	const abc = "rules:\n- {name: r, resources: [configmaps], annotations: {b: '2', a: '1', c: ''}}\n"
	const nsSelector = "rules:\n- {name: r, resources: [configmaps], namespaceSelector: team=a, annotations: {a: '1'}}\n"
	nsLabels := source.Namespaces(func(ns string) (metav1.Object, bool) {
		l, ok := map[string]labels.Set{"ns-a": {"team": "a"}, "ns-b": {"team": "b"}}[ns]
		return &metav1.ObjectMeta{Name: ns, Labels: l}, ok
	})
	ann := func(kind, key string, old, new *string) Change { // what rule r wants
		return Change{Kind: kind, Key: key, Old: old, New: new, Rule: "r"}
	}
	pruned := func(key string, old *string) Change { // no rule wants it
		return Change{Kind: "annotation", Key: key, Old: old}
	}
	tests := []struct {
		name  string
		rules string
		obj   *unstructured.Unstructured
		want  *Object
	}{
		{"nothing to change", abc, cm("ns", "x", map[string]string{"a": "1", "b": "2", "c": "", "user": "u"}), nil},
		{"no annotations: every key, Old nil, sorted", abc, cm("ns", "x", nil), &Object{
			Resource: "configmaps.v1", Namespace: "ns", Name: "x",
			Changes:  []Change{ann("annotation", "a", nil, ptr.To("1")), ann("annotation", "b", nil, ptr.To("2")), ann("annotation", "c", nil, ptr.To(""))},
			Requests: merge(`{"metadata":{"annotations":{"a":"1","b":"2","c":""}}}`),
		}},
		{"wrong values: Old set, other keys untouched", abc, cm("ns", "x", map[string]string{"a": "1", "b": "3", "c": "x", "user": "u"}), &Object{
			Resource: "configmaps.v1", Namespace: "ns", Name: "x",
			Changes:  []Change{ann("annotation", "b", ptr.To("3"), ptr.To("2")), ann("annotation", "c", ptr.To("x"), ptr.To(""))},
			Requests: merge(`{"metadata":{"annotations":{"b":"2","c":""}}}`),
		}},
		{"labels and removals", "rules:\n- {name: r, resources: [configmaps], labels: {tier: web, app: x}, removeAnnotations: [old, gone]}\n",
			object("ConfigMap", "ns", "x", map[string]string{"old": "o"}, map[string]string{"app": "y"}), &Object{
				Resource: "configmaps.v1", Namespace: "ns", Name: "x",
				Changes:  []Change{ann("annotation", "old", ptr.To("o"), nil), ann("label", "app", ptr.To("y"), ptr.To("x")), ann("label", "tier", nil, ptr.To("web"))},
				Requests: merge(`{"metadata":{"annotations":{"old":null},"labels":{"app":"x","tier":"web"}}}`),
			}},
		{"our key no rule wants is deleted", abc, cm("ns", "x", map[string]string{"a": "1", "b": "2", "c": "", "stale": "s"}, "a", "stale"), &Object{
			Resource: "configmaps.v1", Namespace: "ns", Name: "x",
			Changes:  []Change{pruned("stale", ptr.To("s"))},
			Requests: merge(`{"metadata":{"annotations":{"stale":null}}}`),
		}},
		{"excluded namespace", abc, cm("kube-system", "x", nil), nil},
		{"excluded namespace: our keys deleted", abc, cm("kube-system", "x", map[string]string{"a": "1"}, "a"), &Object{
			Resource: "configmaps.v1", Namespace: "kube-system", Name: "x",
			Changes:  []Change{pruned("a", ptr.To("1"))},
			Requests: merge(`{"metadata":{"annotations":{"a":null}}}`),
		}},
		{"namespace selected", nsSelector, cm("ns-a", "x", nil), &Object{
			Resource: "configmaps.v1", Namespace: "ns-a", Name: "x",
			Changes:  []Change{ann("annotation", "a", nil, ptr.To("1"))},
			Requests: merge(`{"metadata":{"annotations":{"a":"1"}}}`),
		}},
		{"namespace not selected", nsSelector, cm("ns-b", "x", nil), nil},
		{"namespace unknown", nsSelector, cm("ns-c", "x", nil), nil},
		{"untracked: server-side apply", abc, untracked("ConfigMap", "ns", "x", map[string]string{"a": "1", "b": "2"}, nil), &Object{
			Resource: "configmaps.v1", Namespace: "ns", Name: "x",
			Changes: []Change{ann("annotation", "c", nil, ptr.To(""))},
			Requests: []patch.Request{{Type: types.ApplyPatchType, Force: true,
				Body: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns","resourceVersion":"3","annotations":{"c":""}}}`)}},
		}},
		{"cluster-scoped", "rules:\n- {name: r, resources: [namespaces], annotations: {a: '1'}}\n", object("Namespace", "", "team-a", nil, nil), &Object{
			Resource: "namespaces.v1", Name: "team-a",
			Changes:  []Change{ann("annotation", "a", nil, ptr.To("1"))},
			Requests: merge(`{"metadata":{"annotations":{"a":"1"}}}`),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := rulestest.Compile(t, tc.rules, served...)
			tg := set.SortedTargets()[0]
			before := tc.obj.DeepCopy()
			d, err := reconcile.Decide(tg, tc.obj, nsLabels, manager)
			if err != nil {
				t.Fatalf("Decide() error = %v", err)
			}
			got := pending(tg, tc.obj, d)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("pending() =\n%s\nwant\n%s", format(got), format(tc.want))
			}
			if !reflect.DeepEqual(tc.obj, before) {
				t.Errorf("Decide() or pending() modified the object")
			}
		})
	}
}

func format(o *Object) string {
	if o == nil {
		return "nil"
	}
	str := func(s *string) string {
		if s == nil {
			return "<nil>"
		}
		return fmt.Sprintf("%q", *s)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s/%s", o.Resource, o.Namespace, o.Name)
	for _, r := range o.Requests {
		fmt.Fprintf(&b, "\n  %s force=%v %s", r.Type, r.Force, r.Body)
	}
	for _, c := range o.Changes {
		fmt.Fprintf(&b, "\n  %s %s: %s -> %s", c.Kind, c.Key, str(c.Old), str(c.New))
	}
	return b.String()
}

// newClient returns a fake client that serves configmaps and namespaces
// and holds objs.
func newClient(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{configMaps: "ConfigMapList", namespaces: "NamespaceList", rulestest.Nodes.GVR: "NodeList"}, objs...)
}

// visited is what a visit saw: the pending object's name and patch, or
// nothing for an object that needs no change.
type visited struct{ namespace, name, patch string }

func TestResource(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n- {name: r, resources: [configmaps, namespaces], annotations: {a: '1'}}\n", served...)
	want := map[string]string{"a": "1"}
	objs := []runtime.Object{
		cm("ns1", "missing", nil),
		cm("ns1", "right", want),
		cm("ns2", "wrong", map[string]string{"a": "0"}),
		object("Namespace", "", "ns1", nil, nil),
		object("Namespace", "", "ns2", want, nil),
	}
	const patchA = `application/merge-patch+json {"metadata":{"annotations":{"a":"1"}}}`
	tests := []struct {
		name       string
		gvr        schema.GroupVersionResource
		namespace  string
		wantListNS string
		wantVisits []visited
	}{
		{"every namespace", configMaps, "", "", []visited{{"ns1", "missing", patchA}, {}, {"ns2", "wrong", patchA}}},
		{"one namespace", configMaps, "ns2", "ns2", []visited{{"ns2", "wrong", patchA}}},
		{"empty namespace", configMaps, "ns3", "ns3", nil},
		{"cluster-scoped ignores the namespace", namespaces, "ns2", "", []visited{{"", "ns1", patchA}, {}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newClient(objs...)
			tg := set.Targets[tc.gvr]
			var visits []visited
			err := Resource(t.Context(), client, tg, tc.namespace, manager, nil, new(Unset), func(got *rules.Target, o *Object) error {
				if got != tg {
					t.Errorf("visit got target %v, want the one listed", got.GVR)
				}
				v := visited{}
				if o != nil {
					v = visited{o.Namespace, o.Name, fmt.Sprintf("%s %s", o.Requests[0].Type, o.Requests[0].Body)}
				}
				visits = append(visits, v)
				return nil
			})
			if err != nil {
				t.Fatalf("Resource() error = %v", err)
			}
			if !slices.Equal(visits, tc.wantVisits) {
				t.Errorf("visits = %v, want %v", visits, tc.wantVisits)
			}
			checkOnlyLists(t, client, tc.gvr, tc.wantListNS)
		})
	}
}

// checkOnlyLists fails unless client received only list requests, of gvr
// in namespace ns, for every object.
func checkOnlyLists(t *testing.T, client *dynamicfake.FakeDynamicClient, gvr schema.GroupVersionResource, ns string) {
	t.Helper()
	actions := client.Actions()
	if len(actions) == 0 {
		t.Fatal("no requests, want a list")
	}
	for _, a := range actions {
		if a.GetVerb() != "list" || a.GetResource() != gvr || a.GetNamespace() != ns {
			t.Errorf("request %s %v in namespace %q, want only lists of %v in %q",
				a.GetVerb(), a.GetResource(), a.GetNamespace(), gvr, ns)
		}
		if l, ok := a.(k8stesting.ListAction); ok && !l.GetListRestrictions().Labels.Empty() {
			t.Errorf("list with label selector %q, want every object", l.GetListRestrictions().Labels)
		}
	}
}

func TestResourceErrors(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n", served...)
	stop := errors.New("stop")
	listFailed := errors.New("list failed")
	tests := []struct {
		name       string
		react      k8stesting.ReactionFunc
		visitErr   error
		wantErr    error
		wantVisits int
	}{
		{name: "visit error stops the scan", visitErr: stop, wantErr: stop, wantVisits: 1},
		{name: "list error", react: func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, listFailed },
			wantErr: listFailed, wantVisits: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newClient(cm("ns", "a", nil), cm("ns", "b", nil))
			if tc.react != nil {
				client.PrependReactor("list", "configmaps", tc.react)
			}
			visits := 0
			err := Resource(context.Background(), client, set.Targets[configMaps], "", manager, nil, new(Unset),
				func(*rules.Target, *Object) error { visits++; return tc.visitErr })
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("Resource() error = %v, want %v", err, tc.wantErr)
			}
			if visits != tc.wantVisits {
				t.Errorf("%d visits, want %d", visits, tc.wantVisits)
			}
		})
	}
}

// Sources lists the objects of each source once, and only when a rule
// needs them: the namespaces for namespace selectors, fromNamespace and
// the opt-out of a namespaced resource's objects, the Nodes for fromNode;
// the Lookup finds them by source.
func TestSources(t *testing.T) {
	objs := []runtime.Object{
		object("Namespace", "", "ns-a", nil, map[string]string{"team": "a"}),
		object("Namespace", "", "bare", nil, nil),
		object("Namespace", "", "quiet", map[string]string{rulefile.IgnoreAnnotation: "true"}, nil),
		object("Node", "", "n1", nil, map[string]string{"zone": "eu-1a"}),
	}
	listFailed := errors.New("list failed")
	tests := []struct {
		name       string
		rules      string
		react      k8stesting.ReactionFunc
		wantLists  int
		namespaces bool // the namespaces are found
		nodes      bool // the Nodes are found
		wantErr    error
	}{
		{name: "not needed", rules: "rules:\n- {name: r, resources: [namespaces], annotations: {a: '1'}}\n"},
		{name: "opt-outs", rules: "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n", wantLists: 1, namespaces: true},
		{name: "namespace selector", rules: "rules:\n- {name: r, resources: [configmaps], namespaceSelector: team=a, annotations: {a: '1'}}\n",
			wantLists: 1, namespaces: true},
		{name: "fromNode", rules: "rules:\n- {name: r, resources: [pods], labels: {zone: {fromNode: {label: zone}}}}\n",
			wantLists: 2, namespaces: true, nodes: true},
		{name: "list error", rules: "rules:\n- {name: r, resources: [configmaps], namespaceSelector: team=a, annotations: {a: '1'}}\n",
			react:     func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, listFailed },
			wantLists: 1, wantErr: listFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newClient(objs...)
			if tc.react != nil {
				client.PrependReactor("list", "namespaces", tc.react)
			}
			got, err := Sources(t.Context(), client, rulestest.Compile(t, tc.rules, served...))
			if !errors.Is(err, tc.wantErr) || (err != nil && !strings.HasPrefix(err.Error(), "list namespaces for ")) {
				t.Errorf("Sources() error = %v, want %v, with context", err, tc.wantErr)
			}
			if n := len(client.Actions()); n != tc.wantLists {
				t.Errorf("%d requests, want %d", n, tc.wantLists)
			}
			if err != nil {
				return
			}
			for ns, want := range map[string]labels.Set{"ns-a": {"team": "a"}, "bare": {}, "unknown": nil} {
				m, ok := got.Find(source.Namespace, "", ns)
				var l labels.Set
				if ok {
					l = m.GetLabels()
				}
				if !tc.namespaces {
					want = nil
				}
				if ok != (want != nil) || !reflect.DeepEqual(l, want) && len(l)+len(want) > 0 {
					t.Errorf("labels of %s = %v, %v; want %v, %v", ns, l, ok, want, want != nil)
				}
			}
			if m, ok := got.Find(source.Namespace, "", "quiet"); ok != tc.namespaces || ok && !rules.OptsOut(m.GetAnnotations()) {
				t.Errorf("namespace quiet found %v, opting out; want found %v", ok, tc.namespaces)
			}
			if _, ok := got.Find(source.Node, "", "n1"); ok != tc.nodes {
				t.Errorf("Node n1 found %v, want %v", ok, tc.nodes)
			}
		})
	}
}

// TestUnsetWarnings checks that Resource counts, by rule and reason, each
// object on which a rule cannot compute a key once, and that the warnings
// say how many and what happens to the keys.
func TestUnsetWarnings(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n"+
		"- {name: color, resources: [configmaps], annotations: {c: {cel: 'object.data.color'}, d: {cel: 'object.data.shade'}}}\n"+
		"- {name: owner, resources: [configmaps], annotations: {o: {jsonPath: '{.data.owner}'}}}\n", served...)
	withData := func(name string, data map[string]any) *unstructured.Unstructured {
		u := cm("ns", name, nil)
		u.Object["data"] = data
		return u
	}
	client := newClient(withData("a", nil), withData("b", map[string]any{"color": "red", "shade": "dark"}),
		withData("c", map[string]any{"owner": "me"}), withData("d", map[string]any{"color": "a b", "shade": "x", "owner": "me"}))
	var unset Unset
	if err := Resource(t.Context(), client, set.Targets[configMaps], "", manager, nil, &unset, func(*rules.Target, *Object) error { return nil }); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"rule color: 2 objects: error (its expression failed; a value an object has is kept; explain shows why)",
		"rule owner: 2 objects: source-missing (the field or object it reads is absent, and the rule gives no default; explain shows why)",
	}
	if got := unset.Warnings(); !reflect.DeepEqual(got, want) {
		t.Errorf("Warnings() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestSourcesForNamespaceObject checks that a rule whose CEL reads
// namespaceObject, with no namespaceSelector or fromNamespace, is decided
// on the namespace listed by Sources, as run decides it from its
// namespace informer.
func TestSourcesForNamespaceObject(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {team: {cel: 'namespaceObject.metadata.labels.team'}}}\n", served...)
	client := newClient(object("Namespace", "", "ns-a", nil, map[string]string{"team": "a"}), cm("ns-a", "x", nil))
	look, err := Sources(t.Context(), client, set)
	if err != nil {
		t.Fatal(err)
	}
	var got []*Object
	err = Resource(t.Context(), client, set.Targets[configMaps], "", manager, look, new(Unset), func(_ *rules.Target, o *Object) error {
		if o != nil {
			got = append(got, o)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Changes) != 1 || got[0].Changes[0].Key != "team" || got[0].Changes[0].New == nil || *got[0].Changes[0].New != "a" {
		t.Errorf("pending = %s, want team set to a, read from namespace ns-a", fmt.Sprint(got))
	}
}
