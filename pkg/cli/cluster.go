package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kube-annotator/kube-annotator/pkg/kubeflags"
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/scan"
	"github.com/kube-annotator/kube-annotator/pkg/tenants"
	"github.com/kube-annotator/kube-annotator/pkg/version"
)

// clusterFlags are the flags of commands that talk to a cluster: kubectl's
// connection flags, client-side rate limits, and the namespaces no rule
// applies in.
type clusterFlags struct {
	kube    kubeflags.Flags
	qps     float32
	burst   int
	exclude []string
	// allNamespaces is -A/--all-namespaces, for the commands that take it.
	allNamespaces bool
	// offline, for the commands that take --offline, resolves names with
	// no cluster (offline.go).
	offline *offlineFlags
}

// addClusterFlags adds to c the flags of a command that talks to a
// cluster, with their completions: its requests time out after
// requestTimeout unless --request-timeout says otherwise ("0": never, for
// run, which watches).
func addClusterFlags(c *cobra.Command, requestTimeout string) *clusterFlags {
	fs := newFlags(c)
	f := &clusterFlags{}
	f.kube.DefaultRequestTimeout = requestTimeout
	f.kube.AddFlags(fs)
	// No client-side limit by default: the workers bound how many requests
	// are in flight, and the API server's Priority and Fairness protects it.
	fs.Float32Var(&f.qps, "kube-api-qps", -1, "Requests per second the client may send to the API server; negative: no client-side limit, leaving it to the API server's Priority and Fairness")
	fs.IntVar(&f.burst, "kube-api-burst", 400, "Requests the client may send in a burst above a positive --kube-api-qps")
	f.registerCompletions(c)
	return f
}

// addExcludeFlag adds --exclude-namespaces, for the commands that apply
// rules to objects.
func (f *clusterFlags) addExcludeFlag(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.exclude, "exclude-namespaces", rules.DefaultExcludedNamespaces,
		"Namespace globs no rule applies in, whatever the rules select; --exclude-namespaces= applies rules everywhere")
}

// addAllNamespacesFlag adds -A/--all-namespaces, which says what the
// command does without -n, whatever the kubeconfig context's namespace;
// usage says what that is for the command.
func (f *clusterFlags) addAllNamespacesFlag(fs *pflag.FlagSet, usage string) {
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, usage)
}

// validate reports, naming the flag, a value that cannot be used.
func (f *clusterFlags) validate() error {
	if f.qps == 0 {
		return errors.New("--kube-api-qps must not be 0: a positive limit, or a negative value for none")
	}
	if f.qps > 0 && f.burst < 1 {
		return fmt.Errorf("--kube-api-burst must be at least 1, got %d", f.burst)
	}
	if ns := f.kube.Namespace(); ns != "" {
		if f.allNamespaces {
			return errors.New("-A/--all-namespaces and -n/--namespace cannot be used together: -A is every namespace, -n one")
		}
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			return fmt.Errorf("--namespace %q: %s", ns, strings.Join(msgs, "; "))
		}
	}
	if err := f.kube.Validate(); err != nil {
		return err
	}
	if err := f.offline.validate(); err != nil {
		return err
	}
	return validateExcludeNamespaces(f.exclude)
}

// restConfig builds the client configuration the connection flags
// select, with the client-side rate limits.
func (f *clusterFlags) restConfig() (*rest.Config, error) {
	if err := f.kube.ValidateKubeconfig(); err != nil {
		return nil, usageError{err}
	}
	cfg, err := f.kube.RESTConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = f.qps, f.burst
	cfg.UserAgent = version.UserAgent()
	return cfg, nil
}

// terminalRequestTimeout is --request-timeout's default for the commands
// that end by themselves: a server that accepts connections and never
// answers is reported rather than waited for.
const terminalRequestTimeout = "15s"

// reachedRESTConfig is restConfig, once the API server has answered a
// first request, within the request timeout, or terminalRequestTimeout
// when there is none: a controller that cannot reach its API server at
// start says so in one line rather than through every client that fails.
func (f *clusterFlags) reachedRESTConfig() (*rest.Config, error) {
	cfg, err := f.restConfig()
	if err != nil {
		return nil, err
	}
	reach := rest.CopyConfig(cfg)
	if reach.Timeout == 0 {
		reach.Timeout, _ = time.ParseDuration(terminalRequestTimeout) // a valid duration
	}
	dc, err := discovery.NewDiscoveryClientForConfig(reach)
	if err != nil {
		return nil, err
	}
	if err := kubeflags.Reach(context.Background(), dc.RESTClient(), reach); err != nil {
		return nil, err
	}
	return cfg, nil
}

// resolver returns the client configuration and a resolver over the
// cluster's discovery, once the API server has answered a first request;
// with --offline, no configuration and a resolver that asks no server.
func (f *clusterFlags) resolver() (*rest.Config, *resolve.Resolver, error) {
	if f.offline.enabled() {
		r, err := f.offline.resolver()
		return nil, r, err
	}
	cfg, err := f.restConfig()
	if err != nil {
		return nil, nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := kubeflags.Reach(context.Background(), dc.RESTClient(), cfg); err != nil {
		return nil, nil, err
	}
	return cfg, resolve.New(dc), nil
}

// namespace is the namespace given with -n, or "" for all namespaces
// (also -A). The kubeconfig context's default namespace does not restrict
// the controller.
func (f *clusterFlags) namespace() string {
	return f.kube.Namespace()
}

// compiled is a rules file compiled against a cluster's discovery.
type compiled struct {
	file *rulefile.File
	cfg  *rest.Config
	// resolver resolves resources through the cluster's discovery, which
	// it asked once for the rules and caches.
	resolver   *resolve.Resolver
	set        *rules.Set
	unresolved []rulefile.FieldError
}

// session is a rules file compiled against a cluster.
type session struct {
	compiled
	path    string
	dynamic dynamic.Interface
	// metadata writes, answered with the objects' metadata only.
	metadata metadata.Interface
	// look finds the objects the rules read besides the objects ruled
	// (their namespaces, a Pod's Node), listed once.
	look source.Lookup
	// unset counts the keys the rules could not compute, for warnings.
	unset scan.Unset
}

// connect loads and validates the rules file — before anything talks to
// the cluster — then resolves its resources through discovery. Resources
// the server does not serve are returned in unresolved; conflicting rules
// are an error.
func connect(ctx context.Context, path string, cf *clusterFlags) (*session, error) {
	c, err := cf.loadAndCompile(path)
	if err == nil && c.file.Tenants != nil { // with the tenants' rules, as the controller, or once would prune their keys
		c.set, c.unresolved, err = tenants.Compiler{Path: path, Resolve: c.resolver.Resolve, Schemas: c.resolver.Schema, Exclude: cf.exclude}.InCluster(ctx, c.cfg, c.file, c.set, c.unresolved)
	}
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(c.cfg)
	if err != nil {
		return nil, err
	}
	metadataClient, err := metadata.NewForConfig(c.cfg)
	if err != nil {
		return nil, err
	}
	look, err := scan.Sources(ctx, dyn, c.set)
	if err != nil {
		return nil, err
	}
	return &session{compiled: c, path: path, dynamic: dyn, metadata: metadataClient, look: look}, nil
}

// loadAndCompile loads and validates the rules file at path — before
// anything talks to the cluster — and compiles it against the cluster's
// discovery, with the excluded namespaces.
func (f *clusterFlags) loadAndCompile(path string) (compiled, error) {
	file, err := rules.Load(path)
	if err != nil {
		return compiled{}, err
	}
	cfg, r, err := f.resolver()
	if err != nil {
		return compiled{}, err
	}
	set, unresolved, err := resolve.Compile(path, file, r.Resolve, r.Schema, f.exclude)
	if err != nil {
		return compiled{}, err
	}
	return compiled{file: file, cfg: cfg, resolver: r, set: set, unresolved: unresolved}, nil
}

// warnUnset warns, on stderr, of the keys the rules could not compute on
// the objects examined, by rule and reason.
func (s *session) warnUnset(e *env) {
	for _, w := range s.unset.Warnings() {
		fmt.Fprintln(e.Err, "warning: "+w)
	}
}
