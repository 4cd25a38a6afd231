package scan

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
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
