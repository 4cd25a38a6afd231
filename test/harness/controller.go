package harness

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller"
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// ClientRequest is one request a client sent, classified as the API server
// would: get, list, watch, patch, …
type ClientRequest struct {
	Verb string
	Path string
}

// Counter records the requests sent through a rest.Config it wraps.
type Counter struct {
	mu   sync.Mutex
	reqs []ClientRequest
}

// Wrap makes cfg's transport record into c.
func (c *Counter) Wrap(cfg *rest.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			c.mu.Lock()
			c.reqs = append(c.reqs, ClientRequest{Verb: classify(r), Path: r.URL.Path})
			c.mu.Unlock()
			return rt.RoundTrip(r)
		})
	})
}

// Count returns how many requests of verb went to paths containing
// pathPart ("" for any path). Discovery requests are not counted.
func (c *Counter) Count(verb, pathPart string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, r := range c.reqs {
		if r.Verb == verb && strings.Contains(r.Path, pathPart) {
			n++
		}
	}
	return n
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// classify names a request's verb the way the API server does: a GET of a
// collection is a list, with ?watch=true a watch; requests that name no
// resource (discovery) are "discovery".
func classify(r *http.Request) string {
	if r.Method != http.MethodGet {
		return strings.ToLower(r.Method)
	}
	if r.URL.Query().Get("watch") == "true" {
		return "watch"
	}
	// /api/v1/<rest> or /apis/<group>/<version>/<rest>
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		rest = parts[3:]
	default:
		return "discovery"
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	if len(rest) == 1 {
		return "list"
	}
	return "get"
}

// Running is a controller started by StartController.
type Running struct {
	*controller.Controller
	// Requests counts what the controller sent to the API server.
	Requests *Counter
}

// StartController compiles rulesYAML against the control plane and runs a
// controller until the test ends. opts.Workers defaults to 4.
func (e *Env) StartController(t testing.TB, rulesYAML string, opts controller.Options) *Running {
	t.Helper()
	file, err := rules.Parse("rules.yaml", []byte(rulesYAML))
	if err != nil {
		t.Fatalf("rules: %v", err)
	}
	cfg := rest.CopyConfig(e.Config)
	cfg.QPS, cfg.Burst = -1, 0
	counter := &Counter{}
	counter.Wrap(cfg)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	set, unresolved, err := rules.Compile("rules.yaml", file, resolve.New(dc).Resolve)
	if err != nil || len(unresolved) > 0 {
		t.Fatalf("compile rules: %v %v", err, unresolved)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	metadataClient, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Workers == 0 {
		opts.Workers = 4
	}
	c := controller.NewController(dyn, metadataClient, opts)
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	c.SetRules(ctx, set)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("controller: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("controller did not stop within 30s")
		}
	})
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	synced := func() bool { return c.Informers() == len(set.Targets) && c.HasSynced() }
	if !cache.WaitForCacheSync(syncCtx.Done(), synced) {
		t.Fatalf("controller caches did not sync")
	}
	return &Running{Controller: c, Requests: counter}
}
