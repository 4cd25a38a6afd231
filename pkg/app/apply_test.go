package app

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kube-annotator/kube-annotator/pkg/controller"
	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

func TestChangeGuard(t *testing.T) {
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	tests := []struct {
		name    string
		max     int
		preview controller.Preview
		want    string // "" when the reload may go ahead
	}{
		{"off", 0, controller.Preview{Total: 1000}, ""},
		{"at the limit", 3, controller.Preview{Total: 3, PerRule: map[string]int{"a": 3}}, ""},
		{"over the limit", 3, controller.Preview{Total: 4, PerRule: map[string]int{"a": 3, "b": 1}},
			"the new rules would change 4 objects, more than --max-changes 3 (by rule: a: 3, b: 1)"},
		{"uncounted resources do not hold", 3, controller.Preview{Total: 0, Unknown: []schema.GroupVersionResource{widgets}}, ""},
		{"uncounted resources are named", 3, controller.Preview{Total: 5, PerRule: map[string]int{"a": 5}, Unknown: []schema.GroupVersionResource{widgets}},
			"; objects of widgets.v1.example.com not counted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			guard := changeGuard(tc.max, func(*rules.Set) controller.Preview { calls++; return tc.preview })
			err := guard(t.Context(), &rules.Set{})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("guard() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("guard() = %v, want an error containing %q", err, tc.want)
			}
			if tc.max == 0 && calls != 0 {
				t.Errorf("with --max-changes 0 the caches were counted")
			}
		})
	}
}

// With admission policies, the ruled resources are recorded before the
// policies, which write to them, are put in force.
func TestRecordRuled(t *testing.T) {
	client := fake.NewClientset()
	rec := record.New(client.CoreV1(), "ns", "m", "")
	set := &rules.Set{Targets: map[schema.GroupVersionResource]*rules.Target{
		{Version: "v1", Resource: "pods"}: {Resource: rules.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}}},
	}}
	applied := false
	recordRuled(rec, func(context.Context, *rules.Set) {
		applied = true
		if got := rec.Recorded(); len(got) != 1 || got[0].Resource != "pods" {
			t.Errorf("recorded %v when the rules were applied, want pods", got)
		}
	})(t.Context(), set)
	if !applied {
		t.Errorf("the rules were not applied")
	}
}
