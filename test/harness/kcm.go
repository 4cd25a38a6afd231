package harness

import (
	"os/exec"
	"path/filepath"
	"strings"
)

// ControllerManagerControllers are the kube-controller-manager controllers
// that tests and the demo run: Deployments make ReplicaSets, ReplicaSets
// make Pods, new namespaces get their "default" ServiceAccount, deleted
// namespaces are emptied, and deleting a Deployment removes its
// ReplicaSets and Pods.
var ControllerManagerControllers = []string{
	"deployment-controller",
	"replicaset-controller",
	"serviceaccount-controller",
	"namespace-controller",
	"garbage-collector-controller",
}

// ControllerManagerArgs are kube-controller-manager's flags: kubeconfig for
// every controller, no leader election, and no HTTPS endpoint (secure port
// 0), so that it opens no port at all, bound to loopback if it ever did.
func ControllerManagerArgs(kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--controllers=" + strings.Join(ControllerManagerControllers, ","),
		"--use-service-account-credentials=false",
		"--bind-address=127.0.0.1",
		"--secure-port=0",
	}
}

// ControllerManagerCommand is the command that runs the
// kube-controller-manager built with the control plane against kubeconfig.
func ControllerManagerCommand(kubeconfig string) *exec.Cmd {
	return exec.Command(filepath.Join(AssetsDir(), "kube-controller-manager"), ControllerManagerArgs(kubeconfig)...)
}
