package patch

import (
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OwnedBy returns the annotation and label keys that the field manager
// manager owns, as the API server records them in an object's
// managedFields: the keys it set that nobody changed since. Ownership kept
// by the server survives restarts of the controller.
func OwnedBy(managedFields []metav1.ManagedFieldsEntry, manager string) Owned {
	var o Owned
	for _, e := range managedFields {
		if e.Manager != manager {
			continue
		}
		anns, lbls, ok := entryKeys(e)
		if !ok {
			continue // not a field set this controller could have written
		}
		o.Annotations = addKeys(o.Annotations, anns)
		o.Labels = addKeys(o.Labels, lbls)
	}
	return o
}

// entryKeys returns the annotation and label field sets of a managedFields
// entry, and false when the entry holds no field set that can be read.
func entryKeys(e metav1.ManagedFieldsEntry) (annotations, labels map[string]json.RawMessage, ok bool) {
	if e.FieldsV1 == nil {
		return nil, nil, false
	}
	var fields struct {
		Metadata struct {
			Annotations map[string]json.RawMessage `json:"f:annotations"`
			Labels      map[string]json.RawMessage `json:"f:labels"`
		} `json:"f:metadata"`
	}
	if json.Unmarshal(e.FieldsV1.Raw, &fields) != nil {
		return nil, nil, false
	}
	return fields.Metadata.Annotations, fields.Metadata.Labels, true
}

// addKeys adds the keys of a fieldsV1 set ({"f:key": {}, ".": {}}) to m.
func addKeys(m map[string]bool, set map[string]json.RawMessage) map[string]bool {
	for f := range set {
		if key, ok := strings.CutPrefix(f, "f:"); ok && key != "" {
			if m == nil {
				m = map[string]bool{}
			}
			m[key] = true
		}
	}
	return m
}
