// Package logs sets up the logs of kube-annotator's commands, as
// k8s.io/component-base/logs does for Kubernetes' components: AddFlags
// adds klog's -v and --vmodule; Setup gives a command that ends by itself
// its own logger and, unless -v or --vmodule is given, silences klog's
// global output, through which client-go would log every failed request;
// Quiet silences it while something else, such as completion, asks the
// cluster.
//
// Layer "command" of deps_test.go: it imports nothing of this module, and
// nothing of pkg/cli, which imports it.
package logs
