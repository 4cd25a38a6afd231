package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/kubelet"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

var leases = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// applyDeploy renders deploy/ with kustomize and applies it as a user
// would (taking over fields a test changed); it returns the manifests.
func applyDeploy(t *testing.T) string {
	t.Helper()
	rendered, err := kubectl(t, "", "kustomize", filepath.Join(h.RepoRoot(), "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := kubectl(t, rendered, "apply", "--server-side", "--force-conflicts", "-f", "-"); err != nil {
		t.Fatalf("apply deploy/: %v\n%s", err, out)
	}
	t.Cleanup(func() { removeOptOutLock(t) })
	return rendered
}

// removeOptOutLock deletes deploy/'s opt-out lock, which applyDeploy (and
// a release's install.yaml) installs: it lets only deploy/'s
// ServiceAccount and cluster admins write the opt-out annotation, which
// the record ConfigMap carries, so the later tests' controllers, each run
// as an identity of its own, could not create their records.
func removeOptOutLock(t *testing.T) {
	t.Helper()
	for _, kind := range []string{"validatingadmissionpolicybinding", "validatingadmissionpolicy"} {
		if out, err := kubectl(t, "", "delete", "--ignore-not-found", kind, "kube-annotator-optout-lock"); err != nil {
			t.Errorf("delete %s kube-annotator-optout-lock: %v\n%s", kind, err, out)
		}
	}
}

// The binary runs as deploy/'s Pod runs it: the ServiceAccount's token, the
// CA and the namespace in /var/run/secrets/kubernetes.io/serviceaccount,
// the API server from KUBERNETES_SERVICE_HOST and _PORT, no kubeconfig,
// the rules in a ConfigMap volume. It converges, elects its leader on a
// Lease in its own namespace, and reloads the rules when the kubelet
// swaps the volume's files.
func TestInCluster(t *testing.T) {
	if err := kubelet.MountNamespaceError(); err != nil {
		t.Skipf("cannot run the controller as in a Pod here: %v", err)
	}
	applyDeploy(t)
	const podNamespace = "kube-annotator" // deploy/'s; its Role grants the Lease there
	pod := kubelet.NewPodIdentity(t, env.Config, podNamespace, "kube-annotator")
	checkServingCert(t, pod)
	ns := env.NewNamespace(t)
	seed(t, ns)

	// The ConfigMap deploy/ applied, mounted as the Deployment mounts it.
	cm := env.Get(t, h.ConfigMaps, podNamespace, "kube-annotator-rules")
	shipped, _, _ := unstructured.NestedString(cm.Object, "data", "rules.yaml")
	vol := kubelet.NewConfigMapVolume(t, t.TempDir(), map[string]string{"rules.yaml": shipped})

	host := captureHost(t)
	p := startInPod(t, pod, filepath.Join(vol.Dir, "rules.yaml"), ns)

	t.Run("it sees the Pod's files, the host does not", func(t *testing.T) {
		waitPodMount(t, p, host.mountpoint)
		host.checkUnchanged(t, "while the controller runs")
		if v := environ(t, p, "KUBECONFIG"); v != "" {
			t.Errorf("the controller's environment has %s", v)
		}
		home := strings.TrimPrefix(environ(t, p, "HOME"), "HOME=")
		if _, err := os.Stat(filepath.Join(home, ".kube", "config")); home == "" || err == nil {
			t.Errorf("the controller's HOME %q is unset or has a kubeconfig", home)
		}
	})

	t.Run("converges as the ServiceAccount", func(t *testing.T) {
		env.WaitForAnnotation(t, 30*time.Second, h.Deployments, ns, "web", sampleKey, sampleValue)
		env.WaitForAnnotation(t, 5*time.Second, h.ReplicaSets, ns, "web-rs", sampleKey, sampleValue)
		env.WaitForAnnotation(t, 5*time.Second, h.Frigates, ns, "frigate-sample", sampleKey, sampleValue)
		waitReady(t, p)
	})

	var identity string
	t.Run("leads on the Lease in its own namespace", func(t *testing.T) {
		p.WaitMetric(t, 5*time.Second, "kube_annotator_leader", 1)
		identity = leaderIdentity(t, p)
		if got := leaseHolder(t, podNamespace, "kube-annotator"); got != identity {
			t.Errorf("Lease %s/kube-annotator is held by %q, want this process, %q", podNamespace, got, identity)
		}
		if got := leaseHolder(t, "default", "kube-annotator"); got == identity {
			t.Errorf("this process holds a Lease in the namespace default")
		}
	})

	t.Run("a ConfigMap volume update reloads the rules", func(t *testing.T) {
		const reloaded = "kube-annotator.test/reloaded"
		vol.Update(map[string]string{"rules.yaml": withRule(t, shipped, map[string]any{
			"name":        "in-cluster",
			"resources":   []string{"deployments", "replicasets", "pods", "frigates.ship.nwiizo.dev"},
			"annotations": map[string]string{reloaded: "yes"},
		})})
		env.WaitForAnnotation(t, 10*time.Second, h.Deployments, ns, "web", reloaded, "yes")
		env.WaitForAnnotation(t, 5*time.Second, h.ReplicaSets, ns, "web-rs", reloaded, "yes")
		env.WaitForAnnotation(t, 5*time.Second, h.Pods, ns, "web-pod", reloaded, "yes")
		env.WaitForAnnotation(t, 5*time.Second, h.Frigates, ns, "frigate-sample", reloaded, "yes")
		p.WaitMetric(t, 5*time.Second, "kube_annotator_rules", 3)
	})

	p.Terminate(t)
	if identity != "" && leaseHolder(t, podNamespace, "kube-annotator") == identity {
		t.Errorf("the Lease is still held by the stopped process")
	}
	host.checkUnchanged(t, "after the controller stopped")
}

// startInPod starts `kube-annotator run` as a container of pod, with the
// Deployment's arguments but for --leader-elect (on by default in a
// cluster), its servers on loopback, and only namespace ns.
func startInPod(t *testing.T, pod kubelet.PodIdentity, rulesFile, ns string) *proc.Process {
	t.Helper()
	metrics, probes := proc.FreeAddr(t), proc.FreeAddr(t)
	p := proc.StartProcess(t, "kube-annotator (in a Pod)", pod.Command(t, binary, "run",
		"--rules="+rulesFile, "--leader-election-id=kube-annotator",
		"--metrics-bind-address="+metrics, "--health-probe-bind-address="+probes, "-n", ns))
	p.Metrics, p.Probes = metrics, probes
	return p
}

// hostState is what a Pod's mounts must leave unchanged on the host.
type hostState struct {
	mountpoint string
	mounts     []string // the test process's mounts at or under mountpoint
	secrets    error    // os.Stat's error for /var/run/secrets
}

func captureHost(t *testing.T) hostState {
	t.Helper()
	mountpoint, err := kubelet.PodMountpoint()
	if err != nil {
		t.Fatal(err)
	}
	mounts, err := kubelet.Mounts("self", mountpoint)
	if err != nil {
		t.Fatal(err)
	}
	_, secrets := os.Stat("/var/run/secrets")
	return hostState{mountpoint: mountpoint, mounts: mounts, secrets: secrets}
}

// checkUnchanged fails the test if the host's state differs from s.
func (s hostState) checkUnchanged(t *testing.T, when string) {
	t.Helper()
	now := captureHost(t)
	if !slices.Equal(now.mounts, s.mounts) {
		t.Errorf("the host's mounts under %s changed %s:\n%s", s.mountpoint, when, strings.Join(now.mounts, "\n"))
	}
	if (now.secrets == nil) != (s.secrets == nil) {
		t.Errorf("/var/run/secrets on the host %s: %v; before the test: %v", when, now.secrets, s.secrets)
	}
}

// checkServingCert fails the test unless the API server's certificate is
// valid, for the CA a Pod gets, at the address a Pod is given.
func checkServingCert(t *testing.T, pod kubelet.PodIdentity) {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pod.CA) {
		t.Fatal("the CA is not PEM")
	}
	conn, err := tls.Dial("tcp", net.JoinHostPort(pod.Host, pod.Port), &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("the API server's certificate does not verify for %s with the CA: %v", pod.Host, err)
	}
	conn.Close()
}

// environ returns the entry "name=value" of p's environment, or "".
func environ(t *testing.T, p *proc.Process, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID()), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range strings.Split(string(data), "\x00") {
		if strings.HasPrefix(v, name+"=") {
			return v
		}
	}
	return ""
}

// waitPodMount waits until p runs with the Pod's files: the read-only
// tmpfs mounted on mountpoint in its own mount namespace.
func waitPodMount(t *testing.T, p *proc.Process, mountpoint string) {
	t.Helper()
	var mounts []string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		p.MustRun(t, "before it mounted the Pod's files")
		var err error
		mounts, err = kubelet.Mounts(strconv.Itoa(p.PID()), mountpoint)
		if err != nil {
			return false, err
		}
		return slices.ContainsFunc(mounts, func(line string) bool {
			f := strings.Fields(line)
			return f[4] == mountpoint && strings.HasPrefix(f[5], "ro") && strings.Contains(line, " - tmpfs "+kubelet.PodTmpfs+" ")
		}), nil
	})
	if err != nil {
		t.Fatalf("no read-only tmpfs %s on %s in the controller's mount namespace: %v\n%s", kubelet.PodTmpfs, mountpoint, err, strings.Join(mounts, "\n"))
	}
}

// waitReady waits until p's /readyz answers 200.
func waitReady(t *testing.T, p *proc.Process) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return p.Ready(t) == 200, nil
	})
	if err != nil {
		t.Errorf("/readyz = %d, want 200", p.Ready(t))
	}
}

// leadingRE finds the identity p logged when it started leading.
var leadingRE = regexp.MustCompile(`"Leading".* identity="([^"]+)"`)

// leaderIdentity is the identity with which p logged that it leads.
func leaderIdentity(t *testing.T, p *proc.Process) string {
	t.Helper()
	m := leadingRE.FindStringSubmatch(p.Output(t))
	if m == nil {
		t.Fatalf("%s did not log that it leads", p.Name)
	}
	return m[1]
}

// leaseHolder returns the holder of a Lease; "" when the Lease does not
// exist or nobody holds it.
func leaseHolder(t *testing.T, namespace, name string) string {
	t.Helper()
	lease, err := env.Dynamic.Resource(leases).Namespace(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	holder, _, _ := unstructured.NestedString(lease.Object, "spec", "holderIdentity")
	return holder
}

// withRule returns the rules file rulesYAML with rule appended.
func withRule(t *testing.T, rulesYAML string, rule map[string]any) string {
	t.Helper()
	var file map[string]any
	if err := yaml.Unmarshal([]byte(rulesYAML), &file); err != nil {
		t.Fatal(err)
	}
	list, ok := file["rules"].([]any)
	if !ok {
		t.Fatalf("the rules file has no rules list:\n%s", rulesYAML)
	}
	file["rules"] = append(list, rule)
	out, err := yaml.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
