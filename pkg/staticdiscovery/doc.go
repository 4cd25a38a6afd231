// Package staticdiscovery says which resources exist without asking a
// server: the built-in resources of the Kubernetes version the client
// library was built for (builtin.go, generated into
// zz_generated.builtin.go), and the custom resources of
// CustomResourceDefinitions read from files (ReadCRDs, crd.go).
//
// Start at New (discovery.go): a Discovery that serves them as a discovery
// client serves a server's, so that the RESTMapper that resolves resource
// names against a cluster resolves them offline the same way: plural,
// singular and short names, "resource.group" and
// "resource.version.group", at the version a server prefers. It serves
// their OpenAPI v3 documents too (BuiltInOpenAPI, from the embedded
// zz_generated.openapi.json.gz that `make builtin-schemas` rewrites, and
// the CRDs' openAPIV3Schema), so that CEL is type-checked offline against
// the schemas a server would publish.
//
// A cluster may serve less: alpha and beta versions that it does not
// enable, or resources of a newer Kubernetes than the cluster's. And it
// may serve more: its own CRDs and aggregated APIs, and the create-only
// bindings resource, which no typed client names.
//
// Layer "base" of deps_test.go: it imports no other package of this
// module; package resolve uses it for --offline.
package staticdiscovery
