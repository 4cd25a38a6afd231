package cli

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/controller"
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/version"
)

// clusterFlags are the flags of commands that talk to a cluster: kubectl's
// connection flags plus client-side rate limits.
type clusterFlags struct {
	config *genericclioptions.ConfigFlags
	qps    float32
	burst  int
}

func addClusterFlags(fs *pflag.FlagSet) *clusterFlags {
	f := &clusterFlags{config: genericclioptions.NewConfigFlags(true)}
	f.config.AddFlags(fs)
	fs.Float32Var(&f.qps, "kube-api-qps", 200, "Requests per second the client may send to the API server (a negative value disables client-side limiting)")
	fs.IntVar(&f.burst, "kube-api-burst", 400, "Requests the client may send in a burst above --kube-api-qps")
	return f
}

// restConfig builds the client configuration the way kubectl does:
// --kubeconfig, else $KUBECONFIG, else ~/.kube/config, else in-cluster.
func (f *clusterFlags) restConfig() (*rest.Config, error) {
	if f.burst < 1 {
		return nil, fmt.Errorf("--kube-api-burst must be at least 1, got %d", f.burst)
	}
	cfg, err := f.config.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("cluster configuration: %w", err)
	}
	cfg.QPS, cfg.Burst = f.qps, f.burst
	cfg.UserAgent = version.UserAgent()
	return cfg, nil
}

// namespace is the namespace given with -n, or "" for all namespaces. The
// kubeconfig context's default namespace does not restrict the controller.
func (f *clusterFlags) namespace() string {
	if f.config.Namespace == nil {
		return ""
	}
	return *f.config.Namespace
}

func runCommand(ctx context.Context, e *env, args []string) int {
	fs := e.newFlagSet("run", "Run the controller: watch every resource the rules name and keep each object annotated as they say.")
	rulesPath := fs.String("rules", "rules.yaml", "Path to the rules file")
	workers := fs.Int("workers", 8, "Number of objects synced in parallel")
	cf := addClusterFlags(fs)
	addLogFlags(fs)
	if code, ok := e.parse(fs, args); !ok {
		return code
	}
	if *workers < 1 {
		fmt.Fprintf(e.Err, "%s run: --workers must be at least 1, got %d\n", e.prog, *workers)
		return 2
	}
	logger := klog.Background().WithName("kube-annotator")
	ctx = klog.NewContext(ctx, logger)

	// The rules are checked before anything talks to the cluster.
	file, err := rules.Load(*rulesPath)
	if err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	cfg, err := cf.restConfig()
	if err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	set, err := compile(ctx, cfg, *rulesPath, file)
	if err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	logger.Info("Starting", "version", version.Version, "server", cfg.Host, "rules", len(file.Rules), "resources", len(set.Targets))
	c := controller.NewController(dyn, controller.Options{Workers: *workers, Namespace: cf.namespace()})
	if err := c.Run(ctx, set); err != nil {
		logger.Error(err, "Controller failed")
		return 1
	}
	return 0
}

// compile resolves the rules' resources through discovery. A resource the
// server does not serve is logged and left out, so that the others are still
// enforced; conflicting rules are an error.
func compile(ctx context.Context, cfg *rest.Config, path string, file *rules.File) (*rules.Set, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	set, unresolved, err := rules.Compile(path, file, resolve.New(dc).Resolve)
	for _, u := range unresolved {
		klog.FromContext(ctx).Error(nil, "Resource not served; its rules are not enforced", "field", u.Field, "reason", u.Message)
	}
	return set, err
}
