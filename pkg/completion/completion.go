package completion

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/kube-annotator/kube-annotator/pkg/resolve"
)

// Timeout bounds what a completion asks of the cluster: a shell waits for
// it on every TAB, and a cluster that does not answer in time completes
// nothing.
const Timeout = 3 * time.Second

// Limit bounds the objects a name completion lists.
const Limit = 500

// Completer completes names from the cluster Config selects.
type Completer struct {
	// Config builds the client configuration the connection flags select.
	Config func() (*rest.Config, error)
	// Quiet silences the process's logs (on) and restores them: a
	// completion prints nothing but its candidates.
	Quiet func(on bool)
}

// Namespaces completes a namespace with the cluster's namespaces.
func (c Completer) Namespaces(toComplete string) []cobra.Completion {
	names := c.asking(func(ctx context.Context, cfg *rest.Config) ([]string, error) {
		return listNames(ctx, cfg, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "")
	})
	return WithPrefix(names, toComplete)
}

// Object completes an object's arguments as kubectl get's are: a
// resource the cluster serves, then the names of its objects in the
// namespace that namespace returns ("" for every namespace), as a second
// argument or after RESOURCE/.
func (c Completer) Object(args []string, toComplete string, namespace func() (string, error)) []cobra.Completion {
	resource, prefix := "", ""
	switch {
	case len(args) == 1 && !strings.Contains(args[0], "/"):
		resource = args[0]
	case len(args) == 0 && strings.Contains(toComplete, "/"):
		resource, _, _ = strings.Cut(toComplete, "/")
		prefix = resource + "/"
	case len(args) > 0:
		return nil
	}
	out := c.asking(func(ctx context.Context, cfg *rest.Config) ([]string, error) {
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return nil, err
		}
		if resource == "" {
			return resourceNames(dc)
		}
		res, err := resolve.New(dc).Resolve(resource)
		if err != nil {
			return nil, err
		}
		ns := ""
		if res.Namespaced {
			if ns, err = namespace(); err != nil {
				return nil, err
			}
		}
		names, err := listNames(ctx, cfg, res.GVR, ns)
		for i := range names {
			names[i] = prefix + names[i]
		}
		return names, err
	})
	return WithPrefix(out, toComplete)
}

// asking returns what ask finds with the client configuration c selects,
// asked for at most Timeout, with the logs and the server's warnings
// silenced. What fails, or takes longer, completes nothing; discovery
// takes no context, so a slow ask is left behind rather than waited for.
func (c Completer) asking(ask func(context.Context, *rest.Config) ([]string, error)) []string {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	found := make(chan []string, 1)
	c.Quiet(true)
	go func() {
		// The logs stay quiet until ask is done, even when it is left behind.
		defer c.Quiet(false)
		names, err := c.ask(ctx, ask)
		if err != nil {
			names = nil // nothing to complete from
		}
		found <- names
	}()
	select {
	case names := <-found:
		return names
	case <-ctx.Done():
		return nil
	}
}

// ask calls ask with the client configuration c selects, its requests
// bounded by Timeout, the server's warnings silenced.
func (c Completer) ask(ctx context.Context, ask func(context.Context, *rest.Config) ([]string, error)) ([]string, error) {
	cfg, err := c.Config()
	if err != nil {
		return nil, err
	}
	cfg.Timeout = min(cfg.Timeout, Timeout)
	if cfg.Timeout <= 0 {
		cfg.Timeout = Timeout
	}
	cfg.WarningHandler = rest.NoWarnings{}
	return ask(ctx, cfg)
}
