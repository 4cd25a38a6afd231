package reports

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// Options configure a Writer.
type Options struct {
	// FieldManager applies the reports, and owns them.
	FieldManager string
	// Name names the report of every namespace and the ClusterReport.
	Name string
	// Interval is how often, at most, the reports that changed are
	// written.
	Interval time.Duration
	// MaxResults is the most results one report holds.
	MaxResults int
	// Synced says whether the caches have synced: no report is written
	// before, so that none says less than the cluster holds.
	Synced func() bool
}

// Writer writes the reports of a Store that changed.
type Writer struct {
	client dynamic.Interface
	store  *Store
	opts   Options
	// writes counts the requests sent, and bytes the bodies applied.
	writes, bytes atomic.Int64
	// failing says a write failed, so that the next success is logged.
	failing bool
}

// NewWriter returns a Writer of store's reports through client.
func NewWriter(client dynamic.Interface, store *Store, opts Options) *Writer {
	return &Writer{client: client, store: store, opts: opts}
}

// Run finds the reports an earlier process wrote, then writes those that
// changed every Interval, until ctx ends.
func (w *Writer) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	if err := w.adopt(ctx); err != nil {
		logger.Info("Could not list the reports written before; they are rewritten as objects are synced", "err", err)
	}
	t := time.NewTicker(w.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.Flush(ctx)
		}
	}
}

// Writes returns the number of requests sent, and of bytes applied.
func (w *Writer) Writes() (requests, bytes int64) { return w.writes.Load(), w.bytes.Load() }

// adopt records the reports of this name and field manager in the store.
func (w *Writer) adopt(ctx context.Context) error {
	var namespaces []string
	for _, gvr := range []schema.GroupVersionResource{ReportResource, ClusterReportResource} {
		list, err := listOwned(ctx, w.client, gvr, w.opts.FieldManager)
		if err != nil {
			return err
		}
		for _, o := range list {
			if o.GetName() == w.opts.Name {
				namespaces = append(namespaces, o.GetNamespace())
			}
		}
	}
	w.store.Found(namespaces)
	return nil
}

// Flush writes each report that changed, once the caches have synced:
// applies it when its content differs from what was written, deletes it
// when it reports nothing.
func (w *Writer) Flush(ctx context.Context) {
	if !w.opts.Synced() {
		return
	}
	for _, sn := range w.store.dirty() {
		o, hash, err := w.write(ctx, sn)
		if err != nil {
			w.fail(ctx, sn.namespace, err)
			if apierrors.IsNotFound(err) {
				return // the API is not served: one request per interval
			}
		} else if w.failing {
			w.failing = false
			klog.FromContext(ctx).Info("Writing reports again")
		}
		w.store.settle(sn, o, hash)
	}
}

// write applies or deletes the report of sn, as it holds something or
// not, unless the cluster already has it so.
func (w *Writer) write(ctx context.Context, sn snapshot) (outcome, [32]byte, error) {
	rep, reporting := build(sn, w.opts.Name, w.opts.MaxResults)
	res := w.client.Resource(ReportResource).Namespace(sn.namespace)
	if sn.namespace == "" {
		res = w.client.Resource(ClusterReportResource)
	}
	if !reporting {
		if sn.phase == absent {
			return deleted, [32]byte{}, nil
		}
		w.writes.Add(1)
		err := res.Delete(ctx, w.opts.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return failed, [32]byte{}, fmt.Errorf("delete: %w", err)
		}
		return deleted, [32]byte{}, nil
	}
	body, err := json.Marshal(rep)
	if err != nil {
		return failed, [32]byte{}, err
	}
	hash := sha256.Sum256(body)
	if sn.phase == written && hash == sn.hash {
		return applied, hash, nil // changed, and back: nothing to write
	}
	w.writes.Add(1)
	w.bytes.Add(int64(len(body)))
	_, err = res.Patch(ctx, w.opts.Name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: w.opts.FieldManager, Force: ptr.To(true)})
	if err != nil {
		return failed, [32]byte{}, fmt.Errorf("apply: %w", err)
	}
	if logger := klog.FromContext(ctx).V(2); logger.Enabled() {
		logger.Info("Wrote report", "namespace", sn.namespace, "summary", rep.Summary, "results", len(rep.Results))
	}
	return applied, hash, nil
}

// fail logs a failed write, once until a write succeeds; the report is
// written again at the next interval.
func (w *Writer) fail(ctx context.Context, namespace string, err error) {
	logger := klog.FromContext(ctx)
	if w.failing {
		logger = logger.V(2)
	}
	w.failing = true
	logger.Info("Could not write report; retrying at the next interval", "namespace", namespace, "err", err)
}
