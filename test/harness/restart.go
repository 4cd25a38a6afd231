package harness

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kube-annotator/kube-annotator/test/harness/faults"
)

// StopAPIServer stops the control plane's kube-apiserver as an operator
// would: SIGTERM to its process, by PID, then waiting for it to exit. etcd
// and the working files stay, so that StartAPIServer can bring the same
// server back. It reads the process's command line from /proc, so it works
// on Linux only.
func (e *Env) StopAPIServer(ctx context.Context) error {
	return e.apiServer().Stop(ctx)
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, with the
// same binary, arguments, working directory and environment, and waits
// until /readyz answers through Config. Env.Stop stops it.
func (e *Env) StartAPIServer(ctx context.Context) error {
	return e.apiServer().Start(ctx, e.Config)
}

// StartAPIServerWith is StartAPIServer with flags changed, by name without
// the dashes: a flag with a value replaces the flag of that name or is
// added, one with the empty value is removed. Later restarts keep the
// change, as a cluster upgraded keeps its new flags.
func (e *Env) StartAPIServerWith(ctx context.Context, flags map[string]string) error {
	return e.apiServer().StartWith(ctx, e.Config, flags)
}

// APIServerPID is the process ID of the kube-apiserver the harness
// started, for reading its memory from /proc.
func (e *Env) APIServerPID() (int, error) {
	return e.apiServer().PID()
}

// apiServer returns the control plane's kube-apiserver, as faults stops
// and starts it.
func (e *Env) apiServer() *faults.APIServer {
	if e.apiserver == nil {
		s := e.env.ControlPlane.GetAPIServer()
		e.apiserver = faults.NewAPIServer(s.Path, s.SecureServing.Port, filepath.Join(e.dir, "kube-apiserver.log"))
	}
	return e.apiserver
}

// NewProxy starts a proxy to the API server and returns it with a
// kubeconfig that points at it. The test's end stops it.
func (e *Env) NewProxy(t testing.TB) (*faults.Proxy, string) {
	t.Helper()
	return faults.NewProxy(t, e.Config.Host, e.Kubeconfig)
}
