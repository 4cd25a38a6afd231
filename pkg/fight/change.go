package fight

import (
	"hash/fnv"
	"math/bits"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

// Change is a change to an object's annotations and labels as the
// detector counts it: each key with a hash of the value it is set to, or
// of its deletion. Two writes that make the same change have equal sums;
// two that set one key to one value share that key.
type Change struct {
	keys []keyValue
	// sum hashes the whole change, the keys in any order.
	sum uint64
	// sig has one bit set for each key and value: two changes whose sigs
	// share no bit share no key set to the same value.
	sig uint64
}

// keyValue is one key of a change: its kind and name, and its value.
type keyValue struct{ key, value uint64 }

// hash is FNV-1a of s: not seeded, so that the keys and values whose
// sigs share a bit are the same ones in every process (and test).
func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// ChangeOf hashes ch: each key with its kind and its value, or that it
// is deleted.
func ChangeOf(ch patch.Change) Change {
	var c Change
	for kind, m := range []map[string]*string{ch.Annotations, ch.Labels} {
		for k, v := range m {
			kv := keyValue{key: hash(string(rune('a'+kind)) + k), value: 1}
			if v != nil {
				kv.value = hash("=" + *v)
			}
			c.keys = append(c.keys, kv)
			pair := kv.key ^ bits.RotateLeft64(kv.value, 31)
			c.sum += pair // order-independent, as map order is random
			c.sig |= 1 << (pair >> 58)
		}
	}
	return c
}
