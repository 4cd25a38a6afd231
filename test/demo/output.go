package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// printTable shows the demo's objects and their annotation with kubectl.
func (d *demo) printTable(assets string) error {
	cmd := exec.Command(filepath.Join(assets, "kubectl"), append([]string{"--kubeconfig", d.env.Kubeconfig}, kubectlGetArgs...)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	fmt.Println()
	fmt.Printf("$ kubectl %s\n", strings.Join(kubectlGetArgs, " "))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kubectl get: %w", err)
	}
	fmt.Println()
	return nil
}

// kubectlGetArgs list the demo's objects with their annotation.
var kubectlGetArgs = []string{
	"get", "deployments,replicasets,pods,frigates", "-n", namespace,
	"-o", "custom-columns=KIND:.kind,NAME:.metadata.name,SAMPLE-CONTROLLER:.metadata.annotations." + annotationKey,
}

// printHelp tells the user how to look around while the demo runs.
func (d *demo) printHelp(assets string) {
	rules, err := filepath.Abs(d.opts.rules)
	if err != nil {
		rules = d.opts.rules
	}
	fmt.Printf(`kube-annotator is running against a local control plane. Try, in another shell:

  export KUBECONFIG=%s
  export PATH=%s:$PATH   # kubectl v%s (optional)
  kubectl %s
  kubectl annotate deployment %s -n %s %s-   # remove it: the controller puts it back
  kubectl scale deployment %s -n %s --replicas=3   # new Pods get it too

The rules are in %s: edit them and the controller applies them at once
(an invalid edit is logged and the previous rules stay). kube-controller-manager logs to %s.
`, d.env.Kubeconfig, assets, h.K8sVersion(), strings.Join(kubectlGetArgs, " "),
		deployment, namespace, annotationKey, deployment, namespace, rules, d.kcmLog)
	if d.opts.exitAfterReady {
		fmt.Println("\n--exit-after-ready: stopping now.")
		return
	}
	fmt.Println("\nPress Ctrl-C to stop.")
}

// logf prints one of the demo's own log lines on stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[demo] "+format+"\n", args...)
}

// since is the time elapsed since t, rounded for humans.
func since(t time.Time) time.Duration {
	return time.Since(t).Round(100 * time.Millisecond)
}

// relPath is path relative to the working directory when that is shorter.
func relPath(path string) string {
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return path
}
