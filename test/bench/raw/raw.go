package raw

import (
	"context"
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
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kube-annotator/kube-annotator/test/bench/workload"
)

// Command is the subcommand that runs the raw runners: the least a
// program can do to annotate every object, as a floor to compare the
// controllers with. With --metadata it lists and patches through the
// metadata client, whose requests are answered with the objects' metadata
// only, in protobuf; without, through the dynamic client, whose requests
// are answered with whole objects in JSON.
const Command = "raw"

// Main runs the raw runner with the command-line arguments that follow
// Command and returns its exit status: 0 once every object carries the
// annotation, 1 on an error, 2 on a usage error.
func Main(args []string) int {
	fs := flag.NewFlagSet(Command, flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster")
	workers := fs.Int("workers", 8, "patches in flight")
	viaMetadata := fs.Bool("metadata", false, "list and patch through the metadata client instead of the dynamic client")
	echo := fs.Bool("watch", false, "with --metadata: also watch the resources' metadata, from before the list until the events of every write were received")
	var target LabelTarget
	fs.StringVar(&target.Namespace, "namespace", "", "with --label: the Pods' namespace")
	fs.StringVar(&target.Selector, "selector", "", "with --label: the label selector of the Pods to relabel")
	label := fs.String("label", "", "KEY=VALUE: instead of annotating the four resources, set this label on the Pods of --namespace that --selector selects, through the metadata client")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *label != "" {
		var err error
		if target.Key, target.Value, err = ParseLabel(*label); err != nil || target.Namespace == "" {
			fmt.Fprintln(os.Stderr, "raw: --label needs KEY=VALUE and --namespace")
			return 2
		}
		return relabelMain(*kubeconfig, target, max(*workers, 1))
	}
	if *echo && !*viaMetadata {
		fmt.Fprintln(os.Stderr, "raw: --watch needs --metadata")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	c, err := newRawClient(*kubeconfig, *viaMetadata)
	if err != nil {
		fmt.Fprintln(os.Stderr, "raw:", err)
		return 1
	}
	var watched *echoWatch
	if *echo {
		if watched, err = startEchoWatch(ctx, c.(metadataClient).client); err != nil {
			fmt.Fprintln(os.Stderr, "raw:", err)
			return 1
		}
		defer watched.stop()
	}
	listed, patched, err := rawAnnotate(ctx, c, max(*workers, 1))
	if err == nil && watched != nil {
		err = watched.await(ctx, patched)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "raw:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "raw: listed %d objects, patched %d in %v\n", listed, patched, time.Since(start))
	return 0
}

// relabelMain runs the raw loop that relabels the Pods of target and
// returns its exit status.
func relabelMain(kubeconfig string, target LabelTarget, workers int) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	c, err := newRawClient(kubeconfig, true)
	if err == nil {
		var listed, patched int64
		listed, patched, err = rawLabel(ctx, c.(metadataClient).client, target, workers)
		fmt.Fprintf(os.Stderr, "raw: listed %d pods, patched %d in %v\n", listed, patched, time.Since(start))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "raw:", err)
		return 1
	}
	return 0
}

// rawClient is what the raw runner needs of a client: to list every
// object of a resource, page by page, and to patch one.
type rawClient interface {
	// list calls fn with each object of gvr and its annotations.
	list(ctx context.Context, gvr schema.GroupVersionResource, fn func(ref workload.ObjectRef, annotations map[string]string) error) error
	patch(ctx context.Context, ref workload.ObjectRef, data []byte) error
}

// newRawClient returns a client of the cluster of kubeconfig, with no
// client-side rate limiting: a metadata client when viaMetadata, else a
// dynamic client.
func newRawClient(kubeconfig string, viaMetadata bool) (rawClient, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	if viaMetadata {
		c, err := metadata.NewForConfig(cfg)
		return metadataClient{c}, err
	}
	c, err := dynamic.NewForConfig(cfg)
	return dynamicClient{c}, err
}

// rawAnnotate lists every object of the four resources once, page by page,
// and merge-patches those that lack the annotation on workers goroutines.
// No cache, no queue, no retries: the first error ends it.
func rawAnnotate(ctx context.Context, client rawClient, workers int) (listed, patched int64, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	refs := make(chan workload.ObjectRef, 4*workers)
	var nPatched atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ref := range refs {
				if ctx.Err() != nil {
					continue // drain refs, so that the lister is not stuck
				}
				if err := client.patch(ctx, ref, workload.SetPatch); err != nil {
					cancel(fmt.Errorf("patch %s: %w", ref, err))
					continue
				}
				nPatched.Add(1)
			}
		})
	}
	for _, r := range workload.Resources {
		err = client.list(ctx, r.GVR, func(ref workload.ObjectRef, annotations map[string]string) error {
			listed++
			if annotations[workload.AnnotationKey] == workload.AnnotationValue {
				return nil
			}
			select {
			case refs <- ref:
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		})
		if err != nil {
			break
		}
	}
	close(refs)
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil {
		err = cause // a patch failed, or we were interrupted
	}
	return listed, nPatched.Load(), err
}

// dynamicClient lists and patches whole objects, in JSON.
type dynamicClient struct{ client dynamic.Interface }

func (c dynamicClient) list(ctx context.Context, gvr schema.GroupVersionResource, fn func(workload.ObjectRef, map[string]string) error) error {
	opts := metav1.ListOptions{Limit: workload.ListPageSize}
	for range workload.MaxListPages {
		list, err := c.client.Resource(gvr).List(ctx, opts)
		if err != nil {
			return fmt.Errorf("list %s: %w", gvr.Resource, err)
		}
		for _, item := range list.Items {
			if err := fn(workload.ObjectRef{Resource: gvr, Namespace: item.GetNamespace(), Name: item.GetName()}, item.GetAnnotations()); err != nil {
				return err
			}
		}
		if list.GetContinue() == "" {
			return nil
		}
		opts.Continue = list.GetContinue()
	}
	return fmt.Errorf("list %s: more than %d pages", gvr.Resource, workload.MaxListPages)
}

func (c dynamicClient) patch(ctx context.Context, ref workload.ObjectRef, data []byte) error {
	_, err := c.client.Resource(ref.Resource).Namespace(ref.Namespace).Patch(ctx, ref.Name, types.MergePatchType, data, metav1.PatchOptions{})
	return err
}

// metadataClient lists and patches objects' metadata, in protobuf.
type metadataClient struct{ client metadata.Interface }

func (c metadataClient) list(ctx context.Context, gvr schema.GroupVersionResource, fn func(workload.ObjectRef, map[string]string) error) error {
	return workload.EachObject(ctx, c.client, gvr, func(m metav1.PartialObjectMetadata) error {
		return fn(workload.ObjectRef{Resource: gvr, Namespace: m.Namespace, Name: m.Name}, m.Annotations)
	})
}

func (c metadataClient) patch(ctx context.Context, ref workload.ObjectRef, data []byte) error {
	_, err := c.client.Resource(ref.Resource).Namespace(ref.Namespace).Patch(ctx, ref.Name, types.MergePatchType, data, metav1.PatchOptions{})
	return err
}
