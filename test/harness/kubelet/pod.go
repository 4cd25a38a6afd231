package kubelet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ServiceAccountDir is where the kubelet mounts a container's service
// account credentials, and where client-go's in-cluster configuration
// reads them.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// PodTmpfs is the source name of the tmpfs that PodIdentity.Command mounts,
// by which it is found in /proc/<pid>/mountinfo.
const PodTmpfs = "kube-annotator-e2e-pod"

// PodIdentity is what the kubelet gives a Pod's container to reach the API
// server: a service account's token, the cluster's CA and the Pod's
// namespace (files in ServiceAccountDir), and the API server's address
// (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT).
type PodIdentity struct {
	Token      string
	CA         []byte
	Namespace  string
	Host, Port string
}

// NewPodIdentity returns the identity of a Pod in namespace that runs as
// its ServiceAccount serviceAccount, with a token from the TokenRequest
// API, as the kubelet gets it; cfg is an administrator's configuration of
// the API server, whose address and CA the Pod is given.
func NewPodIdentity(t testing.TB, cfg *rest.Config, namespace, serviceAccount string) PodIdentity {
	t.Helper()
	u, err := url.Parse(cfg.Host)
	if err != nil || u.Port() == "" {
		t.Fatalf("API server address %q: want https://host:port (%v)", cfg.Host, err)
	}
	if len(cfg.CAData) == 0 {
		t.Fatalf("the administrator's configuration has no CA data")
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	expiry := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), serviceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("request a token of ServiceAccount %s/%s: %v", namespace, serviceAccount, err)
	}
	return PodIdentity{Token: tr.Status.Token, CA: cfg.CAData, Namespace: namespace, Host: u.Hostname(), Port: u.Port()}
}

// MountNamespaceError says why PodIdentity.Command cannot work here (it
// needs root, and unshare(1) to make a private mount namespace); nil when
// it can.
func MountNamespaceError() error {
	if os.Geteuid() != 0 {
		return errors.New("mounting the service account's files in a private mount namespace needs root")
	}
	if out, err := exec.Command("unshare", "-m", "--propagation", "private", "true").CombinedOutput(); err != nil {
		return fmt.Errorf("unshare -m: %v: %s", err, out)
	}
	return nil
}

// podScript mounts a tmpfs on $1, puts the files of directory $2 in
// ServiceAccountDir, makes the tmpfs read-only as the kubelet's mount is,
// and executes the rest of its arguments.
const podScript = `set -e
mount -t tmpfs -o mode=0755,size=1m ` + PodTmpfs + ` "$1"
mkdir -p ` + ServiceAccountDir + `
cp "$2/token" "$2/ca.crt" "$2/namespace" ` + ServiceAccountDir + `/
mount -o remount,ro "$1"
shift 2
exec "$@"
`

// Command returns a command that runs program with args as a container of
// the Pod sees the cluster: in a private mount namespace (so that nothing
// changes on the host) where ServiceAccountDir holds the identity's files,
// with only the environment that locates the API server, and a HOME with
// no kubeconfig. It needs what MountNamespaceError checks.
func (p PodIdentity) Command(t testing.TB, program string, args ...string) *exec.Cmd {
	t.Helper()
	files := t.TempDir()
	for name, content := range map[string][]byte{"token": []byte(p.Token), "ca.crt": p.CA, "namespace": []byte(p.Namespace)} {
		if err := os.WriteFile(filepath.Join(files, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mountpoint, err := PodMountpoint()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", append([]string{"-m", "--propagation", "private", "sh", "-c", podScript, "sh", mountpoint, files, program}, args...)...)
	cmd.Env = []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + t.TempDir(),
		"KUBERNETES_SERVICE_HOST=" + p.Host,
		"KUBERNETES_SERVICE_PORT=" + p.Port,
		"KUBERNETES_SERVICE_PORT_HTTPS=" + p.Port,
	}
	return cmd
}

// PodMountpoint is where PodIdentity.Command mounts its tmpfs: the nearest
// directory of ServiceAccountDir that exists on the host, with symbolic
// links resolved (/var/run is often /run), so that the files it creates
// under it exist only in the private mount namespace.
func PodMountpoint() (string, error) {
	for dir := filepath.Dir(filepath.Dir(ServiceAccountDir)); dir != "/"; dir = filepath.Dir(dir) {
		if resolved, err := filepath.EvalSymlinks(dir); err == nil {
			return resolved, nil
		}
	}
	return "", fmt.Errorf("no directory of %s exists to mount a tmpfs on", ServiceAccountDir)
}

// Mounts returns the lines of /proc/<pid>/mountinfo ("self" for the test
// process) whose mount point is dir or under it.
func Mounts(pid, dir string) ([]string, error) {
	f, err := os.Open(filepath.Join("/proc", pid, "mountinfo"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		// ID parentID major:minor root mountpoint options …
		fields := strings.Fields(s.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], strings.TrimSuffix(dir, "/")+"/")) {
			lines = append(lines, s.Text())
		}
	}
	return lines, s.Err()
}
