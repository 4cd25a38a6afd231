package objcache

import (
	"encoding/binary"
	"maps"
	"slices"
	"sync"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Interner hands out one shared copy of equal values that cached objects
// hold. The metadata cache keeps mostly the same few values on every
// object: the annotations and labels the rules set, with the rules' own
// values; the controller's own managedFields entry, which records those
// keys; namespaces. Cached objects are read only, so they can share them.
//
// Each table holds at most maxInterned values and starts afresh when full:
// values handed out stay valid, only later equal values are not shared
// with them. Values larger than maxInternedSize are not shared at all.
type Interner struct {
	mu      sync.Mutex
	strings map[string]string
	maps    map[string]map[string]string
	entries map[string][]metav1.ManagedFieldsEntry
	// projections are keyed by the projector's address and the hashes
	// of the keys it dropped.
	projections map[string]*projected
}

// Bounds of an Interner's tables: values each, and bytes per value.
const (
	maxInterned     = 4096
	maxInternedSize = 512
)

func NewInterner() *Interner {
	return &Interner{
		strings:     map[string]string{},
		maps:        map[string]map[string]string{},
		entries:     map[string][]metav1.ManagedFieldsEntry{},
		projections: map[string]*projected{},
	}
}

// string returns the shared copy of s.
func (in *Interner) string(s string) string {
	if len(s) > maxInternedSize {
		return s
	}
	return intern(in, in.strings, s, s)
}

// stringMap returns the shared copy of m, or nil when m is empty.
func (in *Interner) stringMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	var b []byte
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b = appendString(appendString(b, k), m[k])
		if len(b) > maxInternedSize {
			return m
		}
	}
	return intern(in, in.maps, b, m)
}

// managedFields returns the shared copy of entries, as the cache keeps
// them: manager, operation, fields type and field set.
func (in *Interner) managedFields(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	if len(entries) == 0 {
		return nil
	}
	var b []byte
	for _, e := range entries {
		b = appendString(appendString(appendString(b, e.Manager), string(e.Operation)), e.FieldsType)
		if e.FieldsV1 != nil {
			b = appendString(b, string(e.FieldsV1.Raw))
		}
		if len(b) > maxInternedSize {
			return entries
		}
	}
	return intern(in, in.entries, b, entries)
}

// projected returns the shared projected of the objects from which by
// dropped the keys whose hashes are dropped, which it does not keep: it
// copies them when it stores a new one.
func (in *Interner) projected(by *projector, dropped []uint64) *projected {
	if len(dropped)*8 > maxInternedSize {
		return &projected{by: by, dropped: slices.Clone(dropped)}
	}
	var buf [8 + maxInternedSize]byte
	b := binary.LittleEndian.AppendUint64(buf[:0], uint64(uintptr(unsafe.Pointer(by))))
	for _, h := range dropped {
		b = binary.LittleEndian.AppendUint64(b, h)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if p, ok := in.projections[string(b)]; ok {
		return p
	}
	if len(in.projections) >= maxInterned {
		clear(in.projections)
	}
	p := &projected{by: by}
	if len(dropped) > 0 {
		p.dropped = slices.Clone(dropped)
	}
	in.projections[string(b)] = p
	return p
}

// intern returns the value table holds for key, after storing v there if
// it holds none. The key is copied only then.
func intern[K string | []byte, V any](in *Interner, table map[string]V, key K, v V) V {
	in.mu.Lock()
	defer in.mu.Unlock()
	if shared, ok := table[string(key)]; ok {
		return shared
	}
	if len(table) >= maxInterned {
		clear(table)
	}
	table[string(key)] = v
	return v
}

// appendString appends s to b, prefixed with its length, so that the
// concatenation of several tells them apart.
func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}
