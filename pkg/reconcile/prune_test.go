package reconcile

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

func TestToPrune(t *testing.T) {
	deployments := schema.GroupResource{Group: "apps", Resource: "deployments"}
	pods := schema.GroupResource{Resource: "pods"}
	frigates := schema.GroupResource{Group: "ship.nwiizo.dev", Resource: "frigates"}
	set := &rules.Set{Targets: map[schema.GroupVersionResource]*rules.Target{
		deployments.WithVersion("v1"):   {},
		frigates.WithVersion("v1beta1"): {},
	}}
	tests := []struct {
		name     string
		recorded []schema.GroupResource
		want     []schema.GroupResource
	}{
		{"nothing recorded", nil, nil},
		{"every recorded resource ruled", []schema.GroupResource{deployments}, nil},
		{"a recorded resource no rule names", []schema.GroupResource{deployments, pods}, []schema.GroupResource{pods}},
		{"ruled at another version is ruled", []schema.GroupResource{frigates, pods}, []schema.GroupResource{pods}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ToPrune(tc.recorded, set); !slices.Equal(got, tc.want) {
				t.Errorf("ToPrune(%v) = %v, want %v", tc.recorded, got, tc.want)
			}
		})
	}
}
