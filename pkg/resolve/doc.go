// Package resolve turns resource names as users write them (kubectl style:
// plural, singular, short name, "resource.group", "resource.version.group")
// into the GroupVersionResource the API server serves, through discovery.
//
// Start at New (resolve.go), a Resolver over a discovery client, or
// NewOffline (offline.go), one over package staticdiscovery's built-in
// resources and CRD files for --offline. Compile (compile.go) is the one
// call every command makes: rules.Compile with the Resolver's names and
// schemas, and the excluded namespaces.
//
// Layer "decide" of deps_test.go: it imports rules and staticdiscovery,
// and of client-go only discovery and its RESTMapper; no informer.
package resolve
