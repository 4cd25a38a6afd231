// Package rbac computes the least-privilege RBAC of the controller for a
// rules file: the ServiceAccount, the ClusterRole and its binding for what
// the controller does cluster-wide, and a Role and RoleBinding in every
// namespace it writes in, without a cluster-wide grant there.
//
// It is pure: a rules file and its resources, resolved by the caller
// through Resolve (resolve.go), which says which names need resolving and
// what a name that does not resolve means, go in (Generate); apply configurations come out, which YAML prints as a
// stream. Where the controller needs which verb is stated once, in the
// table ResourceVerbs, which `kube-annotator check` asks the API server
// about too, and Grants says, per resource, where its objects are written.
// Start with Generate.
package rbac
