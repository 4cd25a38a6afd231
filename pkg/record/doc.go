// Package record keeps, in the cluster, the list of resources a field
// manager has written to, so that keys it set can be pruned after no rule
// names their resource any more.
//
// Pruning happens only where the controller looks, and it looks only at
// the resources its rules name; the record says where else to look. It
// follows the ApplySet idea of KEP-3659: a parent object that lists the
// group-resources on which the field manager may own keys. A resource is
// added before the first write to it (Record.Ensure), and removed
// (Record.Remove) once no object of it carries a key the field manager
// owns.
//
// Start at New and Record.Load (record.go). The record is a ConfigMap
// named after the field manager (Name), labelled
// app.kubernetes.io/managed-by=kube-annotator and opted out of every rule;
// its format, one line per resource and scope, is described in format.go.
//
// Layer "decide" of deps_test.go: it imports only rules of this module,
// and of client-go only the typed ConfigMaps client.
package record
