package expect

import (
	"hash/maphash"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// The seeds of an annotation's and a label's hashes: the same key hashes
// apart in each.
var annotationSeed, labelSeed = maphash.MakeSeed(), maphash.MakeSeed()

// digest sums a hash of each key of change, with the value it sets or
// that it deletes the key. A sum does not depend on the maps' order. A
// change is what takes an object to what the rules want: it sets only
// keys that are missing or differ and deletes only keys that are there,
// so its digest is that of the difference it makes (changedBy).
func digest(change patch.Change) uint64 {
	var sum uint64
	for k, v := range change.Annotations {
		sum += entry(annotationSeed, k, v)
	}
	for k, v := range change.Labels {
		sum += entry(labelSeed, k, v)
	}
	return sum
}

// changedBy is the digest of the change that takes old's annotations and
// labels to obj's.
func changedBy(old, obj metav1.Object) uint64 {
	return changed(annotationSeed, old.GetAnnotations(), obj.GetAnnotations()) + changed(labelSeed, old.GetLabels(), obj.GetLabels())
}

// changed sums the hashes (entry) of the keys whose value differs from
// old to m, and of the keys m lacks.
func changed(seed maphash.Seed, old, m map[string]string) uint64 {
	var sum uint64
	for k, v := range m {
		if was, ok := old[k]; !ok || was != v {
			sum += entry(seed, k, &v)
		}
	}
	for k := range old {
		if _, ok := m[k]; !ok {
			sum += entry(seed, k, nil)
		}
	}
	return sum
}

// entry hashes key with its value v, or with its deletion when v is nil.
// A key is never empty and holds no NUL byte, which ends it here.
func entry(seed maphash.Seed, key string, v *string) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteString(key)
	if v == nil {
		h.WriteByte(0)
		return h.Sum64()
	}
	h.WriteString("\x00=")
	h.WriteString(*v)
	return h.Sum64()
}

// sameController reports whether old and obj name the same controller
// among their owners, or both none: a rule may read it. The cache keeps
// it as source.ControllerOf reads it.
func sameController(old, obj metav1.Object) bool {
	a, _ := source.ControllerOf(old)
	b, _ := source.ControllerOf(obj)
	return a.UID == b.UID
}
