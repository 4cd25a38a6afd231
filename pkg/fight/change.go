package fight

import (
	"hash/maphash"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

// Change is a hash of a change to an object's annotations and labels:
// two writes that make the same change have the same Change.
type Change uint64

// changeSeed seeds the hashes of this process's changes.
var changeSeed = maphash.MakeSeed()

// ChangeOf hashes ch: each key with its kind and its value, or that it
// is deleted, the keys in any order.
func ChangeOf(ch patch.Change) Change {
	var h maphash.Hash
	h.SetSeed(changeSeed)
	var sum uint64
	for kind, m := range []map[string]*string{ch.Annotations, ch.Labels} {
		for k, v := range m {
			h.Reset()
			h.WriteByte(byte(kind))
			h.WriteString(k)
			if v != nil {
				h.WriteByte(0)
				h.WriteString(*v)
			}
			sum += h.Sum64() // order-independent, as map order is random
		}
	}
	return Change(sum)
}
