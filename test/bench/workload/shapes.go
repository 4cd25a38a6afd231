package workload

import (
	"context"
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Shape is how the seeded objects look.
type Shape struct {
	// name names the shape in tables.
	Name string
	// create creates the object of r named by ref, in one request or
	// more, as the managers of such objects in a cluster would.
	Create func(ctx context.Context, client dynamic.Interface, r Resource, ref ObjectRef) error
}

var (
	// small objects carry nothing but what their kind needs.
	Small = Shape{Name: "small", Create: createSmall}
	// realistic objects carry what objects in a cluster carry: ten labels,
	// four annotations among which kubectl's last-applied-configuration
	// (about 3 KB), and managedFields entries of two managers: kubectl
	// created them with a client-side apply, then Helm updated them.
	Realistic = Shape{Name: "realistic", Create: createRealistic}
)

func createSmall(ctx context.Context, client dynamic.Interface, r Resource, ref ObjectRef) error {
	_, err := client.Resource(r.GVR).Namespace(ref.Namespace).Create(ctx, r.Make(ref.Namespace, ref.Name), metav1.CreateOptions{})
	return err
}

// lastAppliedSize is about the size of the realistic objects'
// kubectl.kubernetes.io/last-applied-configuration.
const lastAppliedSize = 3000

// createRealistic creates the object as `kubectl apply` does the first
// time (a create by the field manager kubectl-client-side-apply, the
// applied configuration in an annotation), then has Helm add its labels
// and annotations with a merge patch.
func createRealistic(ctx context.Context, client dynamic.Interface, r Resource, ref ObjectRef) error {
	obj := r.Make(ref.Namespace, ref.Name)
	obj.SetLabels(map[string]string{
		"app.kubernetes.io/name": ref.Name, "app.kubernetes.io/instance": "shop", "app.kubernetes.io/version": "1.4.2",
		"app.kubernetes.io/component": "web", "app.kubernetes.io/part-of": "shop",
		"team": "payments", "env": "prod", "tier": "frontend",
	})
	applied, err := lastApplied(obj)
	if err != nil {
		return err
	}
	obj.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": applied, "prometheus.io/scrape": "true"})
	ri := client.Resource(r.GVR).Namespace(ref.Namespace)
	if _, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}); err != nil {
		return err
	}
	_, err = ri.Patch(ctx, ref.Name, types.MergePatchType, helmPatch(ref.Namespace), metav1.PatchOptions{FieldManager: "helm"})
	return err
}

// lastApplied is the configuration kubectl records for obj: obj in JSON,
// with a description annotation that makes it lastAppliedSize bytes long,
// as a manifest with a whole spec often is.
func lastApplied(obj *unstructured.Unstructured) (string, error) {
	applied := obj.DeepCopy()
	applied.SetAnnotations(map[string]string{"description": ""})
	b, err := json.Marshal(applied.Object)
	if err != nil {
		return "", err
	}
	applied.SetAnnotations(map[string]string{"description": strings.Repeat("x", max(lastAppliedSize-len(b), 0))})
	b, err = json.Marshal(applied.Object)
	return string(b), err
}

// helmPatch is the merge patch with which Helm takes the objects of its
// release in namespace.
func helmPatch(namespace string) []byte {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]string{"app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "shop-1.4.2"},
		"annotations": map[string]string{"meta.helm.sh/release-name": "shop", "meta.helm.sh/release-namespace": namespace},
	}})
	if err != nil {
		panic(err)
	}
	return data
}
