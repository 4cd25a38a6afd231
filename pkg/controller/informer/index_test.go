package informer

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// TestSourceKeeps checks what the caches of related objects keep: a
// Node's metadata only; an owner's metadata and selector, and the fields
// CEL reads of it (ownerObject), or all of it when an expression reads
// the whole owner.
func TestSourceKeeps(t *testing.T) {
	rollouts := source.Resource{GVR: schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}, Kind: "Rollout", Namespaced: true}
	for _, tc := range []struct {
		name string
		src  *source.Source
		want *projection.Projection
	}{
		{"a Node", source.Node, nil},
		{"an owner read by fromOwner", source.OwnerOf(rollouts), &projection.Projection{Whole: true, Fields: ownerFields}},
		{"an owner whose status CEL reads", source.OwnerOf(rollouts, []string{"status", "stableRS"}, []string{"metadata", "labels", "team"}),
			&projection.Projection{Whole: true, Fields: append(append([][]string{}, ownerFields...), []string{"status", "stableRS"})}},
		{"an owner CEL reads whole", source.OwnerOf(rollouts, []string{"status", "stableRS"}, []string{}), &projection.Projection{Whole: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SourceKeeps(tc.src); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("SourceKeeps() = %+v, want %+v", got, tc.want)
			}
		})
	}
}
