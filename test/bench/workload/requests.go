package workload

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
)

// MaxObjects bounds what the benchmark seeds, so that a typo cannot fill
// the machine. A million small objects take some 2–3 GiB in kube-apiserver's
// watch cache and as much in etcd.
const MaxObjects = 1000000

// ListPageSize is the page size of every list the benchmark sends, and
// MaxListPages bounds how many pages one list may take, well above what
// MaxObjects need.
const (
	ListPageSize = 500
	MaxListPages = 4 * MaxObjects / ListPageSize
)

// EachObject calls fn for every object of gvr in all namespaces, reading
// their metadata page by page, and stops at fn's first error.
func EachObject(ctx context.Context, client metadata.Interface, gvr schema.GroupVersionResource, fn func(metav1.PartialObjectMetadata) error) error {
	opts := metav1.ListOptions{Limit: ListPageSize}
	for range MaxListPages {
		list, err := client.Resource(gvr).List(ctx, opts)
		if err != nil {
			return fmt.Errorf("list %s: %w", gvr.Resource, err)
		}
		for _, item := range list.Items {
			if err := fn(item); err != nil {
				return err
			}
		}
		if list.Continue == "" {
			return nil
		}
		opts.Continue = list.Continue
	}
	return fmt.Errorf("list %s: more than %d pages", gvr.Resource, MaxListPages)
}

// ForEach calls fn(i) for i in [0, n) on at most workers goroutines. It
// stops at the first error, and returns it.
func ForEach(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// SetPatch sets the annotation.
var SetPatch = func() []byte {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{AnnotationKey: AnnotationValue}}})
	if err != nil {
		panic(err)
	}
	return data
}()

// UnsetPatch removes the annotation.
var UnsetPatch = func() []byte {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{AnnotationKey: nil}}})
	if err != nil {
		panic(err)
	}
	return data
}()
