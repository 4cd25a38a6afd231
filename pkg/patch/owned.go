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
		if e.Manager != manager || e.FieldsV1 == nil {
			continue
		}
		var fields struct {
			Metadata struct {
				Annotations map[string]json.RawMessage `json:"f:annotations"`
				Labels      map[string]json.RawMessage `json:"f:labels"`
			} `json:"f:metadata"`
		}
		if json.Unmarshal(e.FieldsV1.Raw, &fields) != nil {
			continue // not a field set this controller could have written
		}
		o.Annotations = addKeys(o.Annotations, fields.Metadata.Annotations)
		o.Labels = addKeys(o.Labels, fields.Metadata.Labels)
	}
	return o
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
