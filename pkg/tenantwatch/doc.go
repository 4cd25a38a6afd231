// Package tenantwatch is the cluster side of tenant rules: it caches the
// ConfigMaps that hold the tenants' rules files (only those the main
// file's tenants section names, by name or label) and, when the section
// selects namespaces by label, the Namespaces; it says when they change;
// and it tells each tenant what of its file is in force — a status
// annotation on the ConfigMap, a Warning Event when something is refused,
// and the kube_annotator_tenant_rules gauge.
//
// Start at New and Watch.Files (watch.go); report.go writes the status.
// pkg/reloader asks it for the files and checks them (package tenants).
//
// Layer "run" of deps_test.go: it imports tenants and spec; only pkg/app
// builds it.
package tenantwatch
