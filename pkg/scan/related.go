package scan

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
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
// (set.Sources(): the namespaces, the Nodes for fromNode, the owners for
// fromOwner, the objects referred to for fromRef — of a ConfigMap read by
// name, only those of that name) and returns
// the Lookup that finds them in those lists.
func Sources(ctx context.Context, client dynamic.Interface, set *rules.Set) (source.Lookup, error) {
	out := objects{}
	for _, src := range set.Sources() {
		var opts metav1.ListOptions
		if src.Named != "" { // a ConfigMap that fromRef reads by name: only it
			opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", src.Named).String()
		}
		list, err := client.Resource(src.Resource.GVR).List(ctx, opts)
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
// of t, names (its namespace, its Node, its owner and the owner's owners)
// and t's rules read, and returns the Lookup that finds them: for
// explain, which reads one object. An object that is not found is not
// known, as to the controller's informers.
func SourcesOf(ctx context.Context, client dynamic.Interface, t *rules.Target, obj metav1.Object) (source.Lookup, error) {
	out := objects{}
	for _, src := range t.Sources() {
		if src.IsOwner {
			continue
		}
		if _, err := out.get(ctx, client, src, obj); err != nil {
			return nil, err
		}
	}
	// Up the chain of owners, one hop at a time: each owner names the
	// next, kept for each source of its resource (a fromOwner value's and
	// ownerObject's, which keeps more fields, read alike here).
	seen := map[string]bool{}
	for cur := obj; cur != nil && !seen[string(cur.GetUID())]; {
		seen[string(cur.GetUID())] = true
		next, read := metav1.Object(nil), false
		for _, src := range t.Sources() {
			switch {
			case !src.IsOwner || src.RefOf(cur) == "":
			case read && next != nil: // the same owner, for another walk of its resource
				out.add(src, next)
			case !read:
				got, err := out.get(ctx, client, src, cur)
				if err != nil {
					return nil, err
				}
				next, read = got, true
			}
		}
		cur = next
	}
	return out, nil
}

// get reads the object of src that obj names, keeps it, and returns it;
// nil when obj names none or it is not found.
func (o objects) get(ctx context.Context, client dynamic.Interface, src *source.Source, obj metav1.Object) (metav1.Object, error) {
	ns, name := src.NamedIn(obj)
	if name == "" {
		return nil, nil
	}
	got, err := client.Resource(src.Resource.GVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %s %s for %s: %w", src.Resource.Kind, name, src.Field, err)
	}
	o.add(src, got)
	return got, nil
}
