package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"
)

// Resources the tests use.
var (
	Frigates    = schema.GroupVersionResource{Group: "ship.nwiizo.dev", Version: "v1beta1", Resource: "frigates"}
	Deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	ReplicaSets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	Pods        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	ConfigMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	Namespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	SAs         = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
)

var nsCounter atomic.Int64

// NewNamespace creates a namespace unique to the test, with the "default"
// ServiceAccount that Pods need: no controller-manager creates it, but
// while a test runs one, whose serviceaccount-controller may create it
// first.
func (e *Env) NewNamespace(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("e2e-%d-%d", time.Now().Unix()%100000, nsCounter.Add(1))
	e.Create(t, Namespaces, "", Object("v1", "Namespace", "", name))
	_, err := e.Dynamic.Resource(SAs).Namespace(name).Create(t.Context(), Object("v1", "ServiceAccount", name, "default"), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create the default ServiceAccount of %s: %v", name, err)
	}
	return name
}

// Object returns a bare object with the given type and name.
func Object(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// FromYAML decodes one object.
func FromYAML(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatalf("decode object: %v", err)
	}
	return u
}

// FrigateSample is deploy/crd/frigate-sample.yaml placed in namespace.
func FrigateSample(t testing.TB, namespace string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "deploy", "crd", "frigate-sample.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	u := FromYAML(t, string(data))
	u.SetNamespace(namespace)
	return u
}

// Deployment returns a one-container Deployment.
func Deployment(t testing.TB, namespace, name string, replicas int) *unstructured.Unstructured {
	return FromYAML(t, fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: app, image: registry.invalid/app:1}]}
`, name, namespace, replicas))
}

// ReplicaSet returns a ReplicaSet with no replicas.
func ReplicaSet(t testing.TB, namespace, name string) *unstructured.Unstructured {
	return FromYAML(t, fmt.Sprintf(`
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  replicas: 0
  selector: {matchLabels: {rs: %[1]s}}
  template:
    metadata: {labels: {rs: %[1]s}}
    spec: {containers: [{name: app, image: registry.invalid/app:1}]}
`, name, namespace))
}

// Pod returns a Pod; nothing schedules it here, which is fine for metadata.
func Pod(t testing.TB, namespace, name string) *unstructured.Unstructured {
	return FromYAML(t, fmt.Sprintf(`
apiVersion: v1
kind: Pod
metadata: {name: %[1]s, namespace: %[2]s}
spec: {containers: [{name: app, image: registry.invalid/app:1}]}
`, name, namespace))
}

// Create creates obj in namespace and returns what the server stored.
func (e *Env) Create(t testing.TB, gvr schema.GroupVersionResource, namespace string, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := e.Dynamic.Resource(gvr).Namespace(namespace).Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s %s/%s: %v", gvr.Resource, namespace, obj.GetName(), err)
	}
	return out
}

// Get reads an object from the server.
func (e *Env) Get(t testing.TB, gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	out, err := e.Dynamic.Resource(gvr).Namespace(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s %s/%s: %v", gvr.Resource, namespace, name, err)
	}
	return out
}

// SetAnnotations merge-patches annotations onto an object, as a user would
// with kubectl annotate; a nil value removes the key.
func (e *Env) SetAnnotations(t testing.TB, gvr schema.GroupVersionResource, namespace, name string, annotations map[string]*string) {
	t.Helper()
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Dynamic.Resource(gvr).Namespace(namespace).Patch(context.Background(), name, types.MergePatchType, data,
		metav1.PatchOptions{FieldManager: "e2e-user"})
	if err != nil {
		t.Fatalf("annotate %s %s/%s: %v", gvr.Resource, namespace, name, err)
	}
}

// WaitForAnnotation waits until the object carries key=value.
func (e *Env) WaitForAnnotation(t testing.TB, timeout time.Duration, gvr schema.GroupVersionResource, namespace, name, key, value string) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		u, err := e.Dynamic.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			last = "not found"
			return false, nil
		}
		if err != nil {
			return false, err
		}
		v, ok := u.GetAnnotations()[key]
		last = fmt.Sprintf("%q (set: %v)", v, ok)
		return ok && v == value, nil
	})
	if err != nil {
		t.Fatalf("%s %s/%s: annotation %s is %s after %v, want %q", gvr.Resource, namespace, name, key, last, timeout, value)
	}
}

// Ptr returns a pointer to s.
func Ptr(s string) *string { return &s }

// Quiet reports the writes the API server served on resources during d,
// during which the test itself must not write to them.
func (e *Env) Quiet(t testing.TB, d time.Duration, resources ...string) Requests {
	t.Helper()
	ctx := context.Background()
	before, err := e.APIRequests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(d)
	after, err := e.APIRequests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	delta := after.Sub(before)
	if n := delta.Writes(resources...); n != 0 {
		t.Errorf("API server served %d writes on %s in %v of steady state, want 0: %s", n, strings.Join(resources, ","), d, delta.WriteSeries(resources...))
	}
	return delta
}
