package workload

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// The annotation every runner sets.
const (
	AnnotationKey   = "sample-controller"
	AnnotationValue = "True"
)

// Resource is one of the benchmark's resources and how to make an object
// of it.
type Resource struct {
	GVR  schema.GroupVersionResource
	Make func(namespace, name string) *unstructured.Unstructured
}

// Resources are the four resources every runner annotates. Nothing runs
// their controllers here (no kube-controller-manager, scheduler or
// kubelet), so the benchmark's objects change only when a runner or the
// benchmark changes them.
var Resources = []Resource{
	{h.Deployments, deployment},
	{h.ReplicaSets, replicaSet},
	{h.Pods, Pod},
	{h.Frigates, frigate},
}

// ResourceNames are the resource labels of apiserver_request_total for
// resources.
func ResourceNames() []string {
	names := make([]string, len(Resources))
	for i, r := range Resources {
		names[i] = r.GVR.Resource
	}
	return names
}

// Namespaces of the seeded objects, and of the latency measurement's Pods.
const (
	SeedNamespaces   = 5
	LatencyNamespace = "bench-latency"
)

// SeedNamespace is the i-th namespace of the seeded objects.
func SeedNamespace(i int) string { return fmt.Sprintf("bench-%d", i) }

// ObjectRef names one object of one resource.
type ObjectRef struct {
	Resource  schema.GroupVersionResource
	Namespace string
	Name      string
}

// String is "resource namespace/name".
func (r ObjectRef) String() string {
	return fmt.Sprintf("%s %s/%s", r.Resource.Resource, r.Namespace, r.Name)
}

// SeedRef is the i-th seeded object: resources take turns, and each
// resource's objects are spread over the namespaces.
func SeedRef(i int) (Resource, ObjectRef) {
	r := Resources[i%len(Resources)]
	n := i / len(Resources)
	return r, ObjectRef{Resource: r.GVR, Namespace: SeedNamespace(n % SeedNamespaces), Name: fmt.Sprintf("obj-%06d", n)}
}

func object(apiVersion, kind, namespace, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion,
		"kind":       kind,
		"metadata":   map[string]any{"namespace": namespace, "name": name},
		"spec":       spec,
	}}
}

func podSpec() map[string]any {
	return map[string]any{"containers": []any{map[string]any{"name": "app", "image": "registry.invalid/app:1"}}}
}

func deployment(namespace, name string) *unstructured.Unstructured {
	labels := map[string]any{"app": name}
	return object("apps/v1", "Deployment", namespace, name, map[string]any{
		"replicas": int64(0),
		"selector": map[string]any{"matchLabels": labels},
		"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": podSpec()},
	})
}

func replicaSet(namespace, name string) *unstructured.Unstructured {
	labels := map[string]any{"rs": name}
	return object("apps/v1", "ReplicaSet", namespace, name, map[string]any{
		"replicas": int64(0),
		"selector": map[string]any{"matchLabels": labels},
		"template": map[string]any{"metadata": map[string]any{"labels": labels}, "spec": podSpec()},
	})
}

// Pod returns a Pod with one container, which nothing schedules here.
func Pod(namespace, name string) *unstructured.Unstructured {
	return object("v1", "Pod", namespace, name, podSpec())
}

func frigate(namespace, name string) *unstructured.Unstructured {
	return object("ship.nwiizo.dev/v1beta1", "Frigate", namespace, name, map[string]any{"foo": "bar"})
}
