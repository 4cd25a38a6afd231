package informer

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// SourceIndex is the name of the index, by the object of src each names,
// of the informers of the resources whose objects name one.
func SourceIndex(src *source.Source) string { return "source:" + src.Field }

// SourceIndexers returns the indexers that the informer of t's objects
// needs for the sources: an index by the object each object names, for
// each source whose objects t's objects name — every entry of the table
// and any other source t reads. An entry's is set whether or not a rule
// reads the source now: an informer whose cache does not keep the field
// that names it indexes nothing, and one built again when a rule starts
// reading it does.
func SourceIndexers(t *rules.Target) cache.Indexers {
	out := cache.Indexers{}
	for _, src := range KnownSources(t.Sources()) {
		if !src.NamedBy(t.GVR.GroupResource(), t.Namespaced) {
			continue
		}
		out[SourceIndex(src)] = func(obj any) ([]string, error) {
			m, ok := obj.(metav1.Object)
			if !ok {
				return nil, nil
			}
			name := src.RefOf(m)
			if name == "" {
				return nil, nil
			}
			return []string{StoreKey(src, m.GetNamespace(), name)}, nil
		}
	}
	return out
}

// KnownSources returns the entries of the source table and, after them,
// each of more that is not one.
func KnownSources(more []*source.Source) []*source.Source {
	return source.Union(source.All(), more)
}

// StoreKey is the key, in the informer of src and in the index by the
// object of src named, of the object of src named name by an object in
// namespace ns.
func StoreKey(src *source.Source, ns, name string) string {
	if src.Resource.Namespaced {
		return ns + "/" + name
	}
	return name
}
