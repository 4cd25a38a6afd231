package raw

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"

	"github.com/kube-annotator/kube-annotator/test/bench/workload"
)

var pods = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// LabelTarget is what the raw loop relabels with --label: the Pods of
// one namespace that a label selector selects, and the label to set.
type LabelTarget struct {
	Namespace, Selector string
	Key, Value          string
}

// ParseLabel parses --label's KEY=VALUE.
func ParseLabel(s string) (key, value string, err error) {
	key, value, ok := strings.Cut(s, "=")
	if !ok || key == "" {
		return "", "", fmt.Errorf("--label %q: want KEY=VALUE", s)
	}
	return key, value, nil
}

// labelPatch is the merge patch that sets key to value.
func labelPatch(key, value string) []byte {
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{key: value}}})
	if err != nil {
		panic(err)
	}
	return data
}

// rawLabel lists the Pods of t once, page by page, through the metadata
// client, and merge-patches the label on those that lack its value, on
// workers goroutines: what a program that knows which Pods to relabel,
// and keeps nothing, does. The first error ends it.
func rawLabel(ctx context.Context, client metadata.Interface, t LabelTarget, workers int) (listed, patched int64, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	patch := labelPatch(t.Key, t.Value)
	names := make(chan string, 4*workers)
	var nPatched atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for name := range names {
				if ctx.Err() != nil {
					continue // drain names, so that the lister is not stuck
				}
				_, err := client.Resource(pods).Namespace(t.Namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
				if err != nil {
					cancel(fmt.Errorf("patch pod %s/%s: %w", t.Namespace, name, err))
					continue
				}
				nPatched.Add(1)
			}
		})
	}
	opts := metav1.ListOptions{LabelSelector: t.Selector, Limit: workload.ListPageSize}
	for ctx.Err() == nil {
		list, lerr := client.Resource(pods).Namespace(t.Namespace).List(ctx, opts)
		if lerr != nil {
			cancel(fmt.Errorf("list pods: %w", lerr))
			break
		}
		for _, m := range list.Items {
			listed++
			if m.Labels[t.Key] == t.Value {
				continue
			}
			select {
			case names <- m.Name:
			case <-ctx.Done():
			}
		}
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	close(names)
	wg.Wait()
	return listed, nPatched.Load(), context.Cause(ctx)
}
