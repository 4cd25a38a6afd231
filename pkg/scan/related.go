package scan

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// objects are the objects of the sources the rules read, by source, then
// by namespace and name: a source.Lookup, as the controller's informers of
// them answer.
type objects map[*source.Source]map[[2]string]metav1.Object

// Find implements source.Lookup.
func (o objects) Find(src *source.Source, namespace, name string) (metav1.Object, bool) {
	obj, ok := o[src][[2]string{namespace, name}]
	return obj, ok
}

// add keeps obj as an object of src.
func (o objects) add(src *source.Source, obj metav1.Object) {
	if o[src] == nil {
		o[src] = map[[2]string]metav1.Object{}
	}
	o[src][[2]string{obj.GetNamespace(), obj.GetName()}] = obj
}

// Sources lists, once, the objects of each source the rules of set read
// (set.Sources(): the namespaces, and the Nodes for fromNode) and returns
// the Lookup that finds them in those lists.
func Sources(ctx context.Context, client dynamic.Interface, set *rules.Set) (source.Lookup, error) {
	out := objects{}
	for _, src := range set.Sources() {
		list, err := client.Resource(src.Resource.GVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list %s for %s: %w", src.Resource.GVR.Resource, src.Reason, err)
		}
		for i := range list.Items {
			out.add(src, &list.Items[i])
		}
	}
	return out, nil
}

// SourcesOf reads, once, the objects of the sources that obj, an object
// of t, names (its namespace, its Node) and t's rules read, and returns
// the Lookup that finds them: for explain, which reads one object. An
// object that is not found is not known, as to the controller's
// informers.
func SourcesOf(ctx context.Context, client dynamic.Interface, t *rules.Target, obj metav1.Object) (source.Lookup, error) {
	out := objects{}
	for _, src := range t.Sources() {
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
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("get %s %s for %s: %w", src.Resource.Kind, name, src.Field, err)
		}
		out.add(src, got)
	}
	return out, nil
}
