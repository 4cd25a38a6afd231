// Package tenants answers which rules a tenant may have: a tenant's rules
// file, read from a ConfigMap of its namespace, is checked against the
// limits of the main file's tenants section (Check), and the rules it
// allows, made the tenant's own — named "NAMESPACE/RULE" and applying in
// its namespace only — are merged after the main file's (Merge, Compose).
// What was refused, and why, is a Result's, which Status tells the tenant.
//
// Start at Check (check.go), then Compose (merge.go). It reads no cluster:
// pkg/reloader feeds it the ConfigMaps the controller caches.
//
// Layer "decide" of deps_test.go: it imports rules, spec and tenantfile.
package tenants
