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

// TestObjectTransform checks that a projected cache keeps only the fields
// the rules read, with metadata (without managedFields, and with its
// labels as map[string]string), apiVersion and kind.
func TestObjectTransform(t *testing.T) {
	in := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}, "managedFields": fixture.Owned(reconcile.FieldManager, "a")},
			"spec": map[string]any{"replicas": int64(3), "paused": true,
				"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "x"}}}}},
			"status": map[string]any{"replicas": int64(3)},
		}}
	}
	meta := [][]string{{"apiVersion"}, {"kind"}, {"metadata"}}
	tests := []struct {
		name   string
		fields [][]string
		want   map[string]any
	}{
		{name: "every field", fields: nil, want: in().Object},
		{name: "metadata only", fields: meta, want: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "labels": map[string]string{"app": "web"}}}},
		{name: "replicas and containers", fields: append(meta, []string{"spec", "replicas"}, []string{"spec", "template", "spec", "containers"}, []string{"spec", "missing", "x"}),
			want: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "web", "labels": map[string]string{"app": "web"}},
				"spec": map[string]any{"replicas": int64(3),
					"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "x"}}}}}}},
		{name: "a path through a list keeps the list", fields: append(meta, []string{"spec", "template", "spec", "containers", "image"}),
			want: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "web", "labels": map[string]string{"app": "web"}},
				"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "x"}}}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ObjectTransform(reconcile.FieldManager, rulestest.Deployments,
				&projection.Projection{Whole: true, Fields: tc.fields, Annotations: sets.New[string](), Labels: sets.New("app")}, NewInterner())(in())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.(interface{ UnstructuredContent() map[string]any }).UnstructuredContent(), tc.want) {
				t.Errorf("kept %v\nwant %v", got.(interface{ UnstructuredContent() map[string]any }).UnstructuredContent(), tc.want)
			}
		})
	}
}
