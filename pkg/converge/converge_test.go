package converge

import (
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// once and diff prune the recorded resources that no rule names; those
// the server does not serve wait.
func TestPruneTargets(t *testing.T) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: record.Name("m"), Namespace: "ns", Labels: map[string]string{record.ManagedByLabel: record.ManagedBy}},
		Data:       map[string]string{record.FieldManagerKey: "m", record.ResourcesKey: "configmaps\ndeployments.apps\nwidgets.example.com -n a\n"},
	}
	rec := record.New(fake.NewClientset(cm).CoreV1(), "ns", "m", "")
	if err := rec.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	deployments := source.Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true}
	set := &rules.Set{Targets: map[schema.GroupVersionResource]*rules.Target{
		{Version: "v1", Resource: "configmaps"}: {Resource: source.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}}},
	}}
	notServed := errors.New("not served")
	targets, unserved := PruneTargets(rec, set, func(gr schema.GroupResource) (source.Resource, error) {
		if gr == deployments.GVR.GroupResource() {
			return deployments, nil
		}
		return source.Resource{}, notServed
	})
	if len(targets) != 1 || targets[0].Resource != deployments || len(targets[0].Rules) != 0 {
		t.Errorf("targets = %+v, want deployments with no rule", targets)
	}
	want := []Unserved{{schema.GroupResource{Group: "example.com", Resource: "widgets"}, notServed}}
	if !reflect.DeepEqual(unserved, want) {
		t.Errorf("unserved = %v, want %v", unserved, want)
	}
}
