// Package check answers what `kube-annotator check` answers of a rules
// file: is it valid, and may the user do with each resource it names what
// run does, where run does it.
//
// Start at Report (report.go), the answer as -o json and -o yaml print it
// and docs/cli.md documents it: problems are added as they are found, the
// verdicts on the cluster's resources from Rules (access.go), which asks
// the API server with a SelfSubjectAccessReview per verb that
// rbac.Needs names; Conclude says whether all is ok.
//
// Compile (compile.go) compiles the file as run does and returns its
// warnings; Tenant (tenant.go) checks a tenant's rules file, from its
// ConfigMap or a file, as the controller does (package tenants).
//
// Layer "verb" of deps_test.go: it asks the API server and writes
// nothing. It parses no flag and imports nothing of pkg/cli or pkg/app.
package check
