package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// rawCommand is the subcommand that runs the raw runner: the least a
// program can do to annotate every object, as a floor to compare the
// controllers with.
const rawCommand = "raw"

func rawMain(args []string) int {
	fs := flag.NewFlagSet(rawCommand, flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster")
	workers := fs.Int("workers", 8, "patches in flight")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	listed, patched, err := rawAnnotate(ctx, *kubeconfig, max(*workers, 1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "raw:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "raw: listed %d objects, patched %d in %v\n", listed, patched, time.Since(start))
	return 0
}

// setPatch sets the annotation.
var setPatch = func() []byte {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{annotationKey: annotationValue}}})
	if err != nil {
		panic(err)
	}
	return data
}()

// rawAnnotate lists every object of the four resources once, page by page,
// and merge-patches those that lack the annotation on workers goroutines.
// No cache, no queue, no retries: the first error ends it.
func rawAnnotate(ctx context.Context, kubeconfig string, workers int) (listed, patched int64, err error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return 0, 0, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limiting
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return 0, 0, err
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	refs := make(chan objectRef, 4*workers)
	var nPatched atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ref := range refs {
				if ctx.Err() != nil {
					continue // drain refs, so that the lister is not stuck
				}
				_, err := client.Resource(ref.resource).Namespace(ref.namespace).
					Patch(ctx, ref.name, types.MergePatchType, setPatch, metav1.PatchOptions{})
				if err != nil {
					cancel(fmt.Errorf("patch %s: %w", ref, err))
					continue
				}
				nPatched.Add(1)
			}
		})
	}
	listed, err = rawList(ctx, client, refs)
	close(refs)
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil {
		err = cause // a patch failed, or we were interrupted
	}
	return listed, nPatched.Load(), err
}

// rawList sends every object that lacks the annotation to refs, and
// returns how many objects it listed.
func rawList(ctx context.Context, client dynamic.Interface, refs chan<- objectRef) (int64, error) {
	var listed int64
	for _, r := range resources {
		n, err := rawListResource(ctx, client.Resource(r.gvr), r.gvr, refs)
		listed += n
		if err != nil {
			return listed, err
		}
	}
	return listed, nil
}

// rawListResource lists the objects of one resource, page by page.
func rawListResource(ctx context.Context, client dynamic.NamespaceableResourceInterface, gvr schema.GroupVersionResource, refs chan<- objectRef) (int64, error) {
	var n int64
	opts := metav1.ListOptions{Limit: listPageSize}
	for range maxListPages {
		list, err := client.List(ctx, opts)
		if err != nil {
			return n, fmt.Errorf("list %s: %w", gvr.Resource, err)
		}
		for _, item := range list.Items {
			n++
			if item.GetAnnotations()[annotationKey] == annotationValue {
				continue
			}
			select {
			case refs <- objectRef{resource: gvr, namespace: item.GetNamespace(), name: item.GetName()}:
			case <-ctx.Done():
				return n, context.Cause(ctx)
			}
		}
		if list.GetContinue() == "" {
			return n, nil
		}
		opts.Continue = list.GetContinue()
	}
	return n, fmt.Errorf("list %s: more than %d pages", gvr.Resource, maxListPages)
}
