package kubeflags

import (
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
)

// kubectlFlags are the flags that k8s.io/cli-runtime v0.37.2's
// NewConfigFlags(true).AddFlags registers, kubectl's connection flags, with
// their shorthands, value types and defaults as --help would print them.
var kubectlFlags = []struct{ name, shorthand, typ, def string }{
	{"kubeconfig", "", "string", ""},
	// kubectl's default is $KUBECACHEDIR or ~/.kube/cache; here the flag is
	// accepted and ignored, as it always was, so it has none.
	{"cache-dir", "", "string", ""},
	{"client-certificate", "", "string", ""},
	{"client-key", "", "string", ""},
	{"token", "", "string", ""},
	{"as", "", "string", ""},
	{"as-uid", "", "string", ""},
	{"as-group", "", "stringArray", "[]"},
	{"as-user-extra", "", "stringArray", "[]"},
	{"cluster", "", "string", ""},
	{"user", "", "string", ""},
	{"namespace", "n", "string", ""},
	{"context", "", "string", ""},
	{"server", "s", "string", ""},
	{"tls-server-name", "", "string", ""},
	{"insecure-skip-tls-verify", "", "bool", "false"},
	{"certificate-authority", "", "string", ""},
	{"request-timeout", "", "string", "0"},
	{"disable-compression", "", "bool", "false"},
	{"proxy-url", "", "string", ""},
}

// The connection flags are kubectl's, no more and no fewer.
func TestConnectionFlagsAreKubectls(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	(&Flags{}).AddFlags(fs)
	got := map[string]*pflag.Flag{}
	fs.VisitAll(func(f *pflag.Flag) {
		if _, ok := f.Annotations[Group]; ok {
			got[f.Name] = f
		}
	})
	for _, want := range kubectlFlags {
		f, ok := got[want.name]
		if !ok {
			t.Errorf("--%s is missing", want.name)
			continue
		}
		delete(got, want.name)
		if f.Shorthand != want.shorthand || f.Value.Type() != want.typ || f.DefValue != want.def {
			t.Errorf("--%s: shorthand %q, type %s, default %q; want %q, %s, %q",
				want.name, f.Shorthand, f.Value.Type(), f.DefValue, want.shorthand, want.typ, want.def)
		}
	}
	for name := range got {
		t.Errorf("--%s is not one of kubectl's connection flags", name)
	}
}

// restConfigFor parses args as the connection flags, validates them and
// builds the client configuration from them. When wantErr is set, building
// must fail with an error containing it, and the configuration is nil.
func restConfigFor(t *testing.T, args []string, wantErr string) (*Flags, *rest.Config) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	f := &Flags{}
	f.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	var cfg *rest.Config
	err := f.Validate()
	if err == nil {
		cfg, err = f.RESTConfig()
	}
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("RESTConfig() error = %v, want one containing %q", err, wantErr)
		}
		return f, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return f, cfg
}

// clientView is what a test compares of a rest.Config.
type clientView struct {
	Host, Token, CAFile, CertFile, KeyFile, ServerName string
	Insecure, DisableCompression                       bool
	Impersonate                                        rest.ImpersonationConfig
	Timeout                                            time.Duration
	Proxy                                              string
	Namespace                                          string
}

func viewOf(t *testing.T, cfg *rest.Config, namespace string) clientView {
	t.Helper()
	v := clientView{
		Host: cfg.Host, Token: cfg.BearerToken, CAFile: cfg.CAFile, CertFile: cfg.CertFile, KeyFile: cfg.KeyFile,
		ServerName: cfg.ServerName, Insecure: cfg.Insecure, DisableCompression: cfg.DisableCompression,
		Impersonate: cfg.Impersonate, Timeout: cfg.Timeout, Namespace: namespace,
	}
	if cfg.Proxy != nil {
		req, err := http.NewRequest(http.MethodGet, cfg.Host, nil)
		if err != nil {
			t.Fatal(err)
		}
		u, err := cfg.Proxy(req)
		if err != nil {
			t.Fatal(err)
		}
		v.Proxy = u.String()
	}
	return v
}

// writeKubeconfig writes a kubeconfig with two clusters, users and
// contexts into dir; the current context, a, has a default namespace.
func writeKubeconfig(t *testing.T, dir string) string {
	t.Helper()
	for _, f := range []string{"ca-a.crt", "ca-other.crt", "b.crt", "b.key", "other.crt", "other.key"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("not read when the configuration is built\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := `apiVersion: v1
kind: Config
current-context: a
clusters:
- name: a
  cluster: {server: "https://a.example:6443", certificate-authority: ` + filepath.Join(dir, "ca-a.crt") + `}
- name: b
  cluster: {server: "https://b.example:6443"}
users:
- name: a
  user: {token: token-a}
- name: b
  user: {client-certificate: ` + filepath.Join(dir, "b.crt") + `, client-key: ` + filepath.Join(dir, "b.key") + `}
contexts:
- name: a
  context: {cluster: a, user: a, namespace: team-a}
- name: b
  context: {cluster: b, user: b}
`
	path := filepath.Join(dir, "config")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The connection flags select and override the kubeconfig as kubectl's do.
func TestConnectionFlags(t *testing.T) {
	dir := t.TempDir()
	kc := writeKubeconfig(t, dir)
	file := func(name string) string { return filepath.Join(dir, name) }
	a := clientView{Host: "https://a.example:6443", Token: "token-a", CAFile: file("ca-a.crt")}
	b := clientView{Host: "https://b.example:6443", CertFile: file("b.crt"), KeyFile: file("b.key")}
	with := func(v clientView, change func(*clientView)) clientView {
		change(&v)
		return v
	}
	tests := []struct {
		name string
		// kubeconfigEnv is $KUBECONFIG; unset, ~/.kube/config is an empty
		// directory's.
		kubeconfigEnv string
		args          []string
		want          clientView
		wantErr       string
	}{
		{name: "--kubeconfig: its current context", args: []string{"--kubeconfig", kc}, want: a},
		{name: "$KUBECONFIG", kubeconfigEnv: kc, want: a},
		{name: "--kubeconfig before $KUBECONFIG", kubeconfigEnv: file("missing"), args: []string{"--kubeconfig", kc}, want: a},
		{name: "--context", kubeconfigEnv: kc, args: []string{"--context", "b"}, want: b},
		{name: "--cluster", kubeconfigEnv: kc, args: []string{"--cluster", "b"},
			want: clientView{Host: "https://b.example:6443", Token: "token-a"}},
		{name: "--user", kubeconfigEnv: kc, args: []string{"--user", "b"},
			want: clientView{Host: "https://a.example:6443", CAFile: file("ca-a.crt"), CertFile: file("b.crt"), KeyFile: file("b.key")}},
		{name: "--server", kubeconfigEnv: kc, args: []string{"--server", "https://127.0.0.1:6443"},
			want: with(a, func(v *clientView) { v.Host = "https://127.0.0.1:6443" })},
		{name: "-s without a kubeconfig", args: []string{"-s", "https://127.0.0.1:6443", "--token", "t"},
			want: clientView{Host: "https://127.0.0.1:6443", Token: "t"}},
		{name: "--token", kubeconfigEnv: kc, args: []string{"--token", "token-x"},
			want: with(a, func(v *clientView) { v.Token = "token-x" })},
		{name: "--client-certificate and --client-key", kubeconfigEnv: kc,
			args: []string{"--context", "b", "--client-certificate", file("other.crt"), "--client-key", file("other.key")},
			want: with(b, func(v *clientView) { v.CertFile, v.KeyFile = file("other.crt"), file("other.key") })},
		{name: "impersonation", kubeconfigEnv: kc,
			args: []string{"--as", "alice", "--as-uid", "42", "--as-group", "g1,x", "--as-group", "g2",
				"--as-user-extra", "scopes=a", "--as-user-extra", "scopes=b=c", "--as-user-extra", "team="},
			want: with(a, func(v *clientView) {
				v.Impersonate = rest.ImpersonationConfig{UserName: "alice", UID: "42", Groups: []string{"g1,x", "g2"},
					Extra: map[string][]string{"scopes": {"a", "b=c"}, "team": {""}}}
			})},
		{name: "--as-user-extra without =", kubeconfigEnv: kc, args: []string{"--as", "alice", "--as-user-extra", "scopes"},
			wantErr: `--as-user-extra: "scopes" is not KEY=VALUE`},
		{name: "--insecure-skip-tls-verify drops the kubeconfig's CA", kubeconfigEnv: kc, args: []string{"--insecure-skip-tls-verify"},
			want: with(a, func(v *clientView) { v.Insecure, v.CAFile = true, "" })},
		{name: "--certificate-authority", kubeconfigEnv: kc, args: []string{"--certificate-authority", file("ca-other.crt")},
			want: with(a, func(v *clientView) { v.CAFile = file("ca-other.crt") })},
		{name: "--tls-server-name", kubeconfigEnv: kc, args: []string{"--tls-server-name", "api.internal"},
			want: with(a, func(v *clientView) { v.ServerName = "api.internal" })},
		{name: "--request-timeout with a unit", kubeconfigEnv: kc, args: []string{"--request-timeout", "1m30s"},
			want: with(a, func(v *clientView) { v.Timeout = 90 * time.Second })},
		{name: "--request-timeout in seconds", kubeconfigEnv: kc, args: []string{"--request-timeout", "7"},
			want: with(a, func(v *clientView) { v.Timeout = 7 * time.Second })},
		{name: "--request-timeout invalid", kubeconfigEnv: kc, args: []string{"--request-timeout", "soon"},
			wantErr: "Invalid timeout value"},
		{name: "--disable-compression", kubeconfigEnv: kc, args: []string{"--disable-compression"},
			want: with(a, func(v *clientView) { v.DisableCompression = true })},
		{name: "--proxy-url", kubeconfigEnv: kc, args: []string{"--proxy-url", "http://127.0.0.1:3128"},
			want: with(a, func(v *clientView) { v.Proxy = "http://127.0.0.1:3128" })},
		{name: "-n", kubeconfigEnv: kc, args: []string{"-n", "team-b"},
			want: with(a, func(v *clientView) { v.Namespace = "team-b" })},
		{name: "--cache-dir is ignored", kubeconfigEnv: kc, args: []string{"--cache-dir", file("cache")}, want: a},
		{name: "--kubeconfig missing", args: []string{"--kubeconfig", file("missing")}, wantErr: "cluster configuration"},
		{name: "--context unknown", kubeconfigEnv: kc, args: []string{"--context", "c"}, wantErr: `context "c" does not exist`},
		{name: "no cluster configured", wantErr: "no cluster configured"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.kubeconfigEnv)
			t.Setenv("HOME", t.TempDir())
			t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a cluster
			t.Setenv("KUBERNETES_MASTER", "")
			f, cfg := restConfigFor(t, tc.args, tc.wantErr)
			if cfg == nil {
				return
			}
			if got := viewOf(t, cfg, f.Namespace()); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
