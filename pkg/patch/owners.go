package patch

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Owners are the field managers that own each annotation and label key of
// an object, as its managedFields record them.
type Owners struct {
	Annotations, Labels map[string][]string
}

// OwnersOf returns who owns each annotation and label key in
// managedFields: every manager whose entry lists the key, sorted and
// without repeats (one manager may own a key through an Update and an
// Apply entry). Keys no entry lists are absent.
func OwnersOf(managedFields []metav1.ManagedFieldsEntry) Owners {
	var o Owners
	for _, e := range managedFields {
		if e.FieldsV1 == nil {
			continue
		}
		keys := readFieldKeys(e.FieldsV1.Raw)
		if !keys.ok {
			continue
		}
		o.Annotations = addOwner(o.Annotations, keys.annotations, e.Manager)
		o.Labels = addOwner(o.Labels, keys.labels, e.Manager)
	}
	return o
}

// addOwner adds manager, in order, to the owners of each of keys.
func addOwner(owners map[string][]string, keys []string, manager string) map[string][]string {
	for _, k := range keys {
		if owners == nil {
			owners = map[string][]string{}
		}
		if i, found := slices.BinarySearch(owners[k], manager); !found {
			owners[k] = slices.Insert(owners[k], i, manager)
		}
	}
	return owners
}
