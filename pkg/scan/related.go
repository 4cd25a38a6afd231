package scan

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// Related lists, once, the related objects that the rules of set read
// values from (the Nodes, for fromNode), and makes the rules read them
// from that list, as the controller's informers of them would answer.
func Related(ctx context.Context, client dynamic.Interface, set *rules.Set) error {
	for _, src := range set.RelatedSources() {
		list, err := client.Resource(src.Resource.GVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("list %s for %s: %w", rules.GVRString(src.Resource.GVR), src.Field, err)
		}
		byKey := make(map[[2]string]metav1.Object, len(list.Items))
		for i := range list.Items {
			byKey[[2]string{list.Items[i].GetNamespace(), list.Items[i].GetName()}] = &list.Items[i]
		}
		set.Relate(src, func(ns, name string) (metav1.Object, bool) {
			o, ok := byKey[[2]string{ns, name}]
			return o, ok
		})
	}
	return nil
}

// RelatedOf reads, once, the related objects that obj, an object of t,
// names and t's rules read values from, and makes the rules of t read
// them: for explain, which reads one object.
func RelatedOf(ctx context.Context, client dynamic.Interface, t *rules.Target, obj metav1.Object) error {
	for _, src := range t.RelatedSources() {
		name := src.RefOf(obj)
		if name == "" {
			continue
		}
		ns := ""
		if src.Resource.Namespaced {
			ns = obj.GetNamespace()
		}
		got, err := client.Resource(src.Resource.GVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue // not known, as to the controller's informer
		}
		if err != nil {
			return fmt.Errorf("get %s %s for %s: %w", src.Resource.Kind, name, src.Field, err)
		}
		t.Relate(src, func(n, nm string) (metav1.Object, bool) { return got, n == ns && nm == name })
	}
	return nil
}
