// Package sensitive answers one question: which resources give the
// controller's service account power over the cluster's security when it
// may read and patch them (Secrets, ServiceAccounts, Namespaces, RBAC,
// admission configuration, CRDs), and what that power is, in words for a
// warning.
//
// Start at Resource and its table, sensitiveResources; ByGroupResource
// classifies a resolved resource, ByName a name as a rules file writes it,
// with no cluster. `check` and `rbac` warn with it (pkg/cli).
//
// It is a leaf: it imports apimachinery's schema and nothing of the
// product.
package sensitive
