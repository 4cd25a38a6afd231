package patch

import (
	"encoding/json"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OwnedBy returns the annotation and label keys that the field manager
// manager owns, as the API server records them in an object's
// managedFields: the keys it set that nobody changed since. Ownership kept
// by the server survives restarts of the controller.
func OwnedBy(managedFields []metav1.ManagedFieldsEntry, manager string) Owned {
	var o Owned
	for _, e := range managedFields {
		if e.Manager != manager || e.FieldsV1 == nil {
			continue
		}
		keys := ownKeys(e.FieldsV1.Raw)
		if !keys.ok {
			continue // not a field set this controller could have written
		}
		o.Annotations = addListed(o.Annotations, keys.annotations)
		o.Labels = addListed(o.Labels, keys.labels)
	}
	return o
}

// fieldKeys are the annotation and label keys a field set lists; ok is
// false when it cannot be read.
type fieldKeys struct {
	annotations, labels []string
	ok                  bool
}

// ownFieldSets memoizes ownKeys by the field set's bytes. A controller's
// own entries repeat a handful of field sets across all its objects, and
// decoding the JSON again on every sync would be most of what deciding an
// object costs. The map is emptied when it reaches maxOwnFieldSets.
var ownFieldSets struct {
	sync.RWMutex
	m map[string]fieldKeys
}

// maxOwnFieldSets bounds ownFieldSets; maxOwnFieldSetBytes the size of a
// field set it keeps.
const (
	maxOwnFieldSets     = 4096
	maxOwnFieldSetBytes = 2048
)

// ownKeys returns the annotation and label keys the field set raw lists.
func ownKeys(raw []byte) fieldKeys {
	ownFieldSets.RLock()
	keys, found := ownFieldSets.m[string(raw)]
	ownFieldSets.RUnlock()
	if found {
		return keys
	}
	keys = readFieldKeys(raw)
	if len(raw) > maxOwnFieldSetBytes {
		return keys
	}
	ownFieldSets.Lock()
	if ownFieldSets.m == nil || len(ownFieldSets.m) >= maxOwnFieldSets {
		ownFieldSets.m = make(map[string]fieldKeys)
	}
	ownFieldSets.m[string(raw)] = keys
	ownFieldSets.Unlock()
	return keys
}

// listKeys returns the keys of a fieldsV1 set ({"f:key": {}, ".": {}}).
func listKeys(set map[string]json.RawMessage) []string {
	var out []string
	for f := range set {
		if key, ok := strings.CutPrefix(f, "f:"); ok && key != "" {
			out = append(out, key)
		}
	}
	return out
}

// addListed adds keys to m.
func addListed(m map[string]bool, keys []string) map[string]bool {
	for _, k := range keys {
		if m == nil {
			m = make(map[string]bool, len(keys))
		}
		m[k] = true
	}
	return m
}

// readFieldKeys returns the annotation and label keys the fieldsV1 set raw
// lists ({"f:metadata": {"f:annotations": {"f:key": {}, ".": {}}, …}}).
func readFieldKeys(raw []byte) fieldKeys {
	var fields struct {
		Metadata struct {
			Annotations map[string]json.RawMessage `json:"f:annotations"`
			Labels      map[string]json.RawMessage `json:"f:labels"`
		} `json:"f:metadata"`
	}
	if json.Unmarshal(raw, &fields) != nil {
		return fieldKeys{}
	}
	return fieldKeys{annotations: listKeys(fields.Metadata.Annotations), labels: listKeys(fields.Metadata.Labels), ok: true}
}
