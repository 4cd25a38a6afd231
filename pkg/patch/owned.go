package patch

// OwnedBy returns the annotation and label keys that the field manager
// manager owns on the object, as the API server records in
// metadata.managedFields: the keys it set that nobody changed since.
// Ownership kept by the server survives restarts of the controller.
func OwnedBy(obj map[string]any, manager string) Owned {
	var o Owned
	md, _ := obj["metadata"].(map[string]any)
	entries, _ := md["managedFields"].([]any)
	for _, e := range entries {
		entry, _ := e.(map[string]any)
		if entry["manager"] != manager {
			continue
		}
		fields, _ := entry["fieldsV1"].(map[string]any)
		meta, _ := fields["f:metadata"].(map[string]any)
		o.Annotations = addKeys(o.Annotations, meta["f:annotations"])
		o.Labels = addKeys(o.Labels, meta["f:labels"])
	}
	return o
}

// addKeys adds the keys of a fieldsV1 set ({"f:key": {}, …}) to m.
func addKeys(m map[string]bool, set any) map[string]bool {
	fields, _ := set.(map[string]any)
	for f := range fields {
		if len(f) > 2 && f[:2] == "f:" {
			if m == nil {
				m = map[string]bool{}
			}
			m[f[2:]] = true
		}
	}
	return m
}
