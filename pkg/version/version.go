// Package version reports which build of kube-annotator is running.
package version

// Version is set at build time with
// -ldflags "-X github.com/kube-annotator/kube-annotator/pkg/version.Version=…".
var Version = "dev"

// UserAgent is what the controller tells the API server it is.
func UserAgent() string { return "kube-annotator/" + Version }
