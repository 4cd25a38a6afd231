package objcache

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

// deployment returns a Deployment as the dynamic client decodes it, with
// the managedFields of kubectl and of this controller, changed by f.
func deployment(f func(md, spec map[string]any)) *unstructured.Unstructured {
	md := map[string]any{"name": "web", "namespace": "team", "uid": "u-1", "resourceVersion": "7", "generation": int64(2),
		"labels": map[string]any{"app": "web"}, "annotations": map[string]any{"a": "1", "kubectl.kubernetes.io/last-applied-configuration": "{}"},
		"managedFields": append(fixture.Owned("kubectl", "a"), fixture.Owned(reconcile.FieldManager, "b")...)}
	spec := map[string]any{"replicas": int64(3), "paused": false}
	if f != nil {
		f(md, spec)
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": md, "spec": spec, "status": map[string]any{"replicas": int64(3)}}}
}

// replicasOnly is what a cache keeps for rules that read
// object.spec.replicas, set annotation a and select by label app.
var replicasOnly = &projection.Projection{Whole: true, Fields: [][]string{{"apiVersion"}, {"kind"}, {"metadata"}, {"spec", "replicas"}},
	Annotations: sets.New("a"), Labels: sets.New("app")}

// transformed returns u as a cache of replicasOnly keeps it.
func transformed(t *testing.T, u *unstructured.Unstructured) *cachedObject {
	t.Helper()
	got, err := ObjectTransform(reconcile.FieldManager, rulestest.Deployments, replicasOnly, NewInterner())(u)
	if err != nil {
		t.Fatal(err)
	}
	return got.(*cachedObject)
}

// TestCachedObjectReads checks that a cached object reads as metadata the
// way the metadata cache's objects do, with only the annotations and
// labels the rules name and this controller's managedFields, and that the
// transform passes it through.
func TestCachedObjectReads(t *testing.T) {
	o := transformed(t, deployment(nil))
	if o.GetName() != "web" || o.GetNamespace() != "team" || o.GetUID() != "u-1" || o.GetResourceVersion() != "7" {
		t.Errorf("identity = %s/%s %s %s", o.GetNamespace(), o.GetName(), o.GetUID(), o.GetResourceVersion())
	}
	if !reflect.DeepEqual(o.GetLabels(), map[string]string{"app": "web"}) || !reflect.DeepEqual(o.GetAnnotations(), map[string]string{"a": "1"}) {
		t.Errorf("labels %v, annotations %v", o.GetLabels(), o.GetAnnotations())
	}
	if mf := o.GetManagedFields(); len(mf) != 1 || mf[0].Manager != reconcile.FieldManager {
		t.Errorf("managedFields = %+v, want this controller's entry only", mf)
	}
	if gvk := o.GetObjectKind().GroupVersionKind(); gvk.Kind != "Deployment" || gvk.Group != "apps" {
		t.Errorf("kind = %v", gvk)
	}
	if again, err := ObjectTransform(reconcile.FieldManager, rulestest.Deployments, replicasOnly, NewInterner())(o); err != nil || again != o {
		t.Errorf("transformed again = %p, %v; want %p", again, err, o)
	}
}

// TestCachedObjectDeepCopy checks that a copy equals the object and
// shares none of its maps.
func TestCachedObjectDeepCopy(t *testing.T) {
	o := transformed(t, deployment(nil))
	c := o.DeepCopyObject().(*cachedObject)
	if !reflect.DeepEqual(c, o) {
		t.Fatalf("copy = %#v\nwant %#v", c, o)
	}
	c.labels["app"] = "x"
	c.content["spec"].(map[string]any)["replicas"] = int64(9)
	c.content["metadata"].(map[string]any)["name"] = "x"
	if o.labels["app"] != "web" || o.content["spec"].(map[string]any)["replicas"] != int64(3) ||
		o.content["metadata"].(map[string]any)["name"] != "web" || o.content["metadata"].(map[string]any)["labels"].(map[string]string)["app"] != "web" {
		t.Errorf("changing the copy changed the object: %#v", o)
	}
}

// TestRelevantUpdateOfCachedObjects checks that an update of an object
// kept with its fields is relevant when a field kept, a label or
// annotation, or this controller's ownership changed, and only then.
func TestRelevantUpdateOfCachedObjects(t *testing.T) {
	tests := []struct {
		name string
		f    func(md, spec map[string]any)
		want bool
	}{
		{"nothing kept", func(md, spec map[string]any) {
			md["resourceVersion"] = "8"
			spec["paused"] = true
			md["managedFields"] = append(fixture.Owned("kubectl", "a", "c"), fixture.Owned(reconcile.FieldManager, "b")...)
		}, false},
		{"a field kept", func(_, spec map[string]any) { spec["replicas"] = int64(4) }, true},
		{"metadata", func(md, _ map[string]any) { md["generation"] = int64(3) }, true},
		{"a label", func(md, _ map[string]any) { md["labels"] = map[string]any{"app": "api"} }, true},
		{"an annotation gone", func(md, _ map[string]any) { delete(md, "annotations") }, true},
		{"our fields", func(md, _ map[string]any) {
			md["managedFields"] = append(fixture.Owned("kubectl", "a"), fixture.Owned(reconcile.FieldManager, "b", "c")...)
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old, updated := transformed(t, deployment(nil)), transformed(t, deployment(tc.f))
			if got := RelevantUpdate(old, updated); got != tc.want {
				t.Errorf("RelevantUpdate() = %v, want %v", got, tc.want)
			}
		})
	}
}
