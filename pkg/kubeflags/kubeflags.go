package kubeflags

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Group is the annotation that marks the connection flags in a flag set;
// help lists them apart from a command's own flags.
const Group = "connection"

// Flags are kubectl's connection flags: the names, shorthands, defaults
// and meanings of k8s.io/cli-runtime's ConfigFlags as kubectl registers
// them, bound to client-go's clientcmd the way ConfigFlags binds them.
// cli-runtime itself is not used: it brings kustomize and, through it, Go's
// plugin package, which makes a cgo build twice the size and its process
// ~30 MiB larger.
type Flags struct {
	kubeconfig string
	// cacheDir is accepted for kubectl's command lines and ignored: kubectl
	// caches discovery there; this tool asks discovery afresh.
	cacheDir string

	clientCertificate string
	clientKey         string
	token             string
	as                string
	asUID             string
	asGroups          []string
	asUserExtra       []string

	cluster   string
	user      string
	namespace string
	context   string

	server                string
	tlsServerName         string
	insecureSkipTLSVerify bool
	certificateAuthority  string
	requestTimeout        string
	// DefaultRequestTimeout is --request-timeout's default; "" is kubectl's,
	// "0", no timeout. Set it before AddFlags.
	DefaultRequestTimeout string
	disableCompression    bool
	proxyURL              string
}

// AddFlags adds the connection flags to fs, in name order and marked as
// Group.
func (k *Flags) AddFlags(fs *pflag.FlagSet) {
	conn := pflag.NewFlagSet("connection", pflag.ContinueOnError)
	conn.StringVar(&k.kubeconfig, "kubeconfig", "", "Path to the kubeconfig file to use for CLI requests.")
	conn.StringVar(&k.cacheDir, "cache-dir", "", "Ignored: accepted for kubectl compatibility (kube-annotator keeps no discovery cache)")

	conn.StringVar(&k.clientCertificate, "client-certificate", "", "Path to a client certificate file for TLS")
	conn.StringVar(&k.clientKey, "client-key", "", "Path to a client key file for TLS")
	conn.StringVar(&k.token, "token", "", "Bearer token for authentication to the API server")
	conn.StringVar(&k.as, "as", "", "Username to impersonate for the operation. User could be a regular user or a service account in a namespace.")
	conn.StringVar(&k.asUID, "as-uid", "", "UID to impersonate for the operation.")
	conn.StringArrayVar(&k.asGroups, "as-group", []string{}, "Group to impersonate for the operation, this flag can be repeated to specify multiple groups.")
	conn.StringArrayVar(&k.asUserExtra, "as-user-extra", []string{}, "User extras to impersonate for the operation, this flag can be repeated to specify multiple values for the same key.")

	conn.StringVar(&k.cluster, "cluster", "", "The name of the kubeconfig cluster to use")
	conn.StringVar(&k.user, "user", "", "The name of the kubeconfig user to use")
	conn.StringVarP(&k.namespace, "namespace", "n", "", "If present, the namespace scope for this CLI request")
	conn.StringVar(&k.context, "context", "", "The name of the kubeconfig context to use")

	conn.StringVarP(&k.server, "server", "s", "", "The address and port of the Kubernetes API server")
	conn.StringVar(&k.tlsServerName, "tls-server-name", "", "Server name to use for server certificate validation. If it is not provided, the hostname used to contact the server is used")
	conn.BoolVar(&k.insecureSkipTLSVerify, "insecure-skip-tls-verify", false, "If true, the server's certificate will not be checked for validity. This will make your HTTPS connections insecure")
	conn.StringVar(&k.certificateAuthority, "certificate-authority", "", "Path to a cert file for the certificate authority")
	conn.StringVar(&k.requestTimeout, "request-timeout", cmp.Or(k.DefaultRequestTimeout, "0"), "The length of time to wait before giving up on a single server request. Non-zero values should contain a corresponding time unit (e.g. 1s, 2m, 3h). A value of zero means don't timeout requests.")
	conn.BoolVar(&k.disableCompression, "disable-compression", false, "If true, opt-out of response compression for all requests to the server")
	conn.StringVar(&k.proxyURL, "proxy-url", "", "Proxy URL to use for requests to the API server")

	conn.VisitAll(func(f *pflag.Flag) {
		if f.Annotations == nil {
			f.Annotations = map[string][]string{}
		}
		f.Annotations[Group] = []string{"true"}
	})
	fs.AddFlagSet(conn)
}

// Loader returns the client configuration the flags select, loaded as
// kubectl loads it: --kubeconfig, else $KUBECONFIG, else ~/.kube/config,
// else in-cluster, with the flags overriding what the kubeconfig says.
func (k *Flags) Loader() (clientcmd.ClientConfig, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.DefaultClientConfig = &clientcmd.DefaultClientConfig
	rules.ExplicitPath = k.kubeconfig
	overrides, err := k.overrides()
	if err != nil {
		return nil, err
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides), nil
}

// overrides are the flags as clientcmd overrides. Empty values override
// nothing: clientcmd merges only the fields that are set.
func (k *Flags) overrides() (*clientcmd.ConfigOverrides, error) {
	extra, err := userExtra(k.asUserExtra)
	if err != nil {
		return nil, err
	}
	o := &clientcmd.ConfigOverrides{ClusterDefaults: clientcmd.ClusterDefaults}
	o.AuthInfo.ClientCertificate = k.clientCertificate
	o.AuthInfo.ClientKey = k.clientKey
	o.AuthInfo.Token = k.token
	o.AuthInfo.Impersonate = k.as
	o.AuthInfo.ImpersonateUID = k.asUID
	o.AuthInfo.ImpersonateGroups = k.asGroups
	o.AuthInfo.ImpersonateUserExtra = extra

	o.ClusterInfo.Server = k.server
	o.ClusterInfo.TLSServerName = k.tlsServerName
	o.ClusterInfo.CertificateAuthority = k.certificateAuthority
	o.ClusterInfo.InsecureSkipTLSVerify = k.insecureSkipTLSVerify
	o.ClusterInfo.DisableCompression = k.disableCompression
	o.ClusterInfo.ProxyURL = k.proxyURL

	o.CurrentContext = k.context
	o.Context.Cluster = k.cluster
	o.Context.AuthInfo = k.user
	o.Context.Namespace = k.namespace
	o.Timeout = k.requestTimeout
	return o, nil
}

// Validate reports, naming the flag, a value that cannot be used.
func (k *Flags) Validate() error {
	_, err := userExtra(k.asUserExtra)
	return err
}

// Namespace is the namespace given with -n, or "".
func (k *Flags) Namespace() string { return k.namespace }

// RESTConfig builds the client configuration the way kubectl does:
// --kubeconfig, else $KUBECONFIG, else ~/.kube/config, else in-cluster.
func (k *Flags) RESTConfig() (*rest.Config, error) {
	loader, err := k.Loader()
	if err != nil {
		return nil, err
	}
	if err := k.configured(loader); err != nil {
		return nil, err
	}
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("cluster configuration: %w", err)
	}
	return cfg, nil
}

// configured fails when no cluster is configured at all. kubectl's loader
// would then fall back to http://localhost:8080, which is never what a user
// of this tool means.
func (k *Flags) configured(loader clientcmd.ClientConfig) error {
	if k.server != "" {
		return nil
	}
	raw, err := loader.RawConfig()
	if err != nil {
		return fmt.Errorf("cluster configuration: %w", err)
	}
	if len(raw.Clusters) > 0 {
		return nil
	}
	if _, err := rest.InClusterConfig(); err == nil {
		return nil
	}
	if k.kubeconfig != "" {
		return fmt.Errorf("no cluster configured: --kubeconfig %s has no cluster", k.kubeconfig)
	}
	if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		return fmt.Errorf("no cluster configured: $%s (%s) has no cluster", clientcmd.RecommendedConfigPathEnvVar, env)
	}
	return errors.New("no cluster configured: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run in a cluster")
}

// DefaultNamespace is -n, else the kubeconfig context's namespace, else
// "default", as kubectl has it.
func (k *Flags) DefaultNamespace() (string, error) {
	loader, err := k.Loader()
	if err != nil {
		return "", err
	}
	ns, _, err := loader.Namespace()
	if err != nil {
		return "", fmt.Errorf("cluster configuration: %w", err)
	}
	return ns, nil
}

// userExtra parses --as-user-extra values, KEY=VALUE each; a key may repeat.
func userExtra(values []string) (map[string][]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	extra := map[string][]string{}
	for _, v := range values {
		key, value, ok := strings.Cut(v, "=")
		if !ok {
			return nil, fmt.Errorf("--as-user-extra: %q is not KEY=VALUE", v)
		}
		extra[key] = append(extra[key], value)
	}
	return extra, nil
}
