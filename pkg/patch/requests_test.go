package patch_test

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

func TestRequests(t *testing.T) {
	tracked := &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns", ResourceVersion: "7",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
	}
	untracked := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{
		"name": "cm", "namespace": "ns", "resourceVersion": "7",
	}}}
	both := patch.Change{Annotations: map[string]*string{"a": ptr.To("1"), "old": nil}, Labels: map[string]*string{"l": ptr.To("x")}}
	tests := []struct {
		name   string
		obj    patch.Object
		change patch.Change
		want   []patch.Request
	}{
		{"tracked object: one merge patch", tracked, both, []patch.Request{{Type: types.MergePatchType,
			Body: []byte(`{"metadata":{"annotations":{"a":"1","old":null},"labels":{"l":"x"}}}`)}}},
		{"untracked object: apply the sets with the resourceVersion, then merge-patch the deletions", untracked, both, []patch.Request{
			{Type: types.ApplyPatchType, Force: true,
				Body: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns","resourceVersion":"7","annotations":{"a":"1"},"labels":{"l":"x"}}}`)},
			{Type: types.MergePatchType, Body: []byte(`{"metadata":{"annotations":{"old":null}}}`)},
		}},
		{"untracked object, sets only: one apply", untracked, patch.Change{Labels: map[string]*string{"l": ptr.To("x")}}, []patch.Request{
			{Type: types.ApplyPatchType, Force: true,
				Body: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns","resourceVersion":"7","labels":{"l":"x"}}}`)},
		}},
		{"untracked object, deletions only: one merge patch", untracked, patch.Change{Annotations: map[string]*string{"x": nil}}, []patch.Request{
			{Type: types.MergePatchType, Body: []byte(`{"metadata":{"annotations":{"x":null}}}`)},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := patch.Requests(tc.obj, tc.change)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				for i := range got {
					t.Logf("got[%d] = %s %v %s", i, got[i].Type, got[i].Force, got[i].Body)
				}
				t.Errorf("Requests differ from %d wanted", len(tc.want))
			}
		})
	}
	if _, err := patch.Requests(tracked, patch.Change{}); err == nil {
		t.Errorf("Requests for an empty change: want an error")
	}
}
