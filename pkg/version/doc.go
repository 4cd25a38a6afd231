// Package version reports which build of kube-annotator is running: its
// version, the commit it was built from, when, and with which Go.
//
// Start at Get (version.go), the Info that `kube-annotator version`
// prints; Version, Commit and Date are set at link time (-ldflags -X, see
// the Makefile), and UserAgent names the build to the API server.
//
// Layer "base" of deps_test.go: it imports no other package of this
// module.
package version
