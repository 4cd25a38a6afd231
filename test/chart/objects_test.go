package chart

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/kube-annotator/kube-annotator/test/harness"
)

// monitoringCRDs stand in for the Prometheus Operator's ServiceMonitor and
// PrometheusRule CRDs, so that the API server serves their kinds: they
// accept any spec. What the spec holds is checked against the operator's
// own Go types (TestMonitoringObjects).
var monitoringCRDs = []string{`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: servicemonitors.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {kind: ServiceMonitor, listKind: ServiceMonitorList, plural: servicemonitors, singular: servicemonitor}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: prometheusrules.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {kind: PrometheusRule, listKind: PrometheusRuleList, plural: prometheusrules, singular: prometheusrule}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`}

// installMonitoringCRDs installs monitoringCRDs once per process.
func installMonitoringCRDs(t *testing.T) {
	t.Helper()
	crds, err := env.Dynamic.Resource(harness.CRDs).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds.Items {
		if crd.GetName() == "servicemonitors.monitoring.coreos.com" {
			return
		}
	}
	for _, doc := range monitoringCRDs {
		env.InstallCRD(t, doc)
	}
	for _, r := range []string{"servicemonitors", "prometheusrules"} {
		waitServed(t, schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: r})
	}
}

// objects decodes a rendered YAML stream.
func objects(t *testing.T, stream string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range Documents(stream) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("decode %s: %v", doc, err)
		}
		out = append(out, u)
	}
	return out
}

// byKind returns the objects of kind.
func byKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// one returns the only object of kind, failing the test otherwise.
func one(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	found := byKind(objs, kind)
	if len(found) != 1 {
		t.Fatalf("%d objects of kind %s, want 1", len(found), kind)
	}
	return found[0]
}

// into converts obj into a typed object.
func into(t *testing.T, obj *unstructured.Unstructured, out any) {
	t.Helper()
	data, err := yaml.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, out); err != nil {
		t.Fatalf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
}

// mapper maps kinds to resources through the control plane's discovery.
func mapper(t *testing.T) meta.RESTMapper {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
}

// ciName is a values file's name without -values.yaml, for subtests.
func ciName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), "-values.yaml")
}
