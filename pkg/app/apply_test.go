package app

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kube-annotator/kube-annotator/pkg/controller"
	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
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
			guard := changeGuard(tc.max, "--max-changes", func(*rules.Set) controller.Preview { calls++; return tc.preview })
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
		{Version: "v1", Resource: "pods"}: {Resource: source.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}}},
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

// On an API server that does not serve MutatingAdmissionPolicy v1, the
// rules are still put in force by the controller, and the metric and
// /readyz say that the policies are not installed, and why.
func TestAdmissionPoliciesNotServed(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("list", "mutatingadmissionpolicies", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingadmissionpolicies"}, "")
	})
	cfg := Config{AdmissionPolicies: true, Record: RecordConfig{FieldManager: "kube-annotator"}}
	rec := record.New(client.CoreV1(), "ns", "kube-annotator", "")
	reg := prometheus.NewRegistry()
	applied := 0
	apply, _, notes := applyChain(cfg, client, rec, func(context.Context, *rules.Set) { applied++ }, reg)
	if got := notes(); got != nil {
		t.Errorf("before a sync, /readyz notes = %q, want none", got)
	}
	apply(t.Context(), rulestest.Compile(t, "rules:\n- {name: a, resources: [configmaps], annotations: {a: '1'}}\n", rulestest.ConfigMaps))
	if applied != 1 {
		t.Errorf("rules applied %d times, want 1: the controller enforces them without policies", applied)
	}
	if got := notes(); len(got) != 1 || !strings.Contains(got[0], "Kubernetes 1.36 and later") {
		t.Errorf("/readyz notes = %q, want one naming the version that serves the policies", got)
	}
	want := map[string]float64{"pending": 0, "synced": 0, "failed": 0, "not-served": 1}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "kube_annotator_admission_policies_state" {
			continue
		}
		for _, m := range f.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("kube_annotator_admission_policies_state = %v, want %v", got, want)
	}
}

// Without admission policies, nothing is said of them.
func TestAdmissionPoliciesOff(t *testing.T) {
	client := fake.NewClientset()
	reg := prometheus.NewRegistry()
	_, _, notes := applyChain(Config{}, client, record.New(client.CoreV1(), "ns", "m", ""), func(context.Context, *rules.Set) {}, reg)
	if got := notes(); got != nil {
		t.Errorf("/readyz notes = %q, want none", got)
	}
	if families, _ := reg.Gather(); len(families) != 0 {
		t.Errorf("registered %d metric families, want none", len(families))
	}
}
