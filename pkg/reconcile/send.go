package reconcile

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Ref names one object of one resource.
type Ref struct {
	GVR       schema.GroupVersionResource
	Namespace string
	Name      string
}

// String formats the reference as "resource.version.group namespace/name".
func (r Ref) String() string {
	return source.GVRString(r.GVR) + " " + klog.KRef(r.Namespace, r.Name).String()
}

// Result is what Send did.
type Result struct {
	// ResourceVersion is the object's resourceVersion after the last
	// request, as the API server answered it.
	ResourceVersion string
	// Gone is set when the API server answered NotFound: the object was
	// deleted after it was read, so nothing is left to change. That is not
	// an error.
	Gone bool
}

// Observer is told the result of every request a Writer sends, e.g. to
// count them.
type Observer func(gvr schema.GroupVersionResource, err error)

// Ledger records durably which resources a field manager writes to, so
// that the keys it sets there can be found and pruned after no rule names
// the resource any more (package record keeps one in the cluster).
type Ledger interface {
	// Ensure records gr, unless it is recorded already; it is called
	// before every write to gr, and the write is not sent when it fails.
	Ensure(ctx context.Context, gr schema.GroupResource) error
}

// noLedger records nothing.
type noLedger struct{}

func (noLedger) Ensure(context.Context, schema.GroupResource) error { return nil }

// Writer sends the requests of Decisions to the API server as one field
// manager, through a metadata client: the API server answers each with
// the object's metadata only (PartialObjectMetadata, in protobuf), so that
// neither side encodes or decodes the whole object per write.
type Writer struct {
	client  metadata.Interface
	manager string
	ledger  Ledger
	observe Observer
}

// NewWriter returns a Writer that sends through client as the field
// manager manager — the one its Decisions were decided for —, records in
// ledger, when not nil, every resource before writing to it, and tells
// observe, when not nil, the result of every request.
func NewWriter(client metadata.Interface, manager string, ledger Ledger, observe Observer) *Writer {
	if ledger == nil {
		ledger = noLedger{}
	}
	if observe == nil {
		observe = func(schema.GroupVersionResource, error) {}
	}
	return &Writer{client: client, manager: manager, ledger: ledger, observe: observe}
}

// Send sends requests, a Decision's, to the object ref names, in order,
// and stops at the first that fails. A server-side apply (Force set) takes
// the keys it sets over from any other field manager: the rules name them.
// Errors name ref and wrap the API server's error, so that
// k8s.io/apimachinery/pkg/api/errors can classify them. Before the first
// request, the Writer's ledger records ref's resource; if it cannot,
// nothing is sent, and the error, which does not wrap the ledger's (it is
// not about the object), is one to retry.
func (w *Writer) Send(ctx context.Context, ref Ref, requests []patch.Request) (Result, error) {
	if len(requests) > 0 {
		if err := w.ledger.Ensure(ctx, ref.GVR.GroupResource()); err != nil {
			return Result{}, fmt.Errorf("patch %s: not sent: its resource is not recorded: %v", ref, err)
		}
	}
	ri := w.client.Resource(ref.GVR).Namespace(ref.Namespace)
	var res Result
	for _, r := range requests {
		opts := metav1.PatchOptions{FieldManager: w.manager}
		if r.Force {
			force := true
			opts.Force = &force
		}
		obj, err := ri.Patch(ctx, ref.Name, r.Type, r.Body, opts)
		w.observe(ref.GVR, err)
		if apierrors.IsNotFound(err) {
			return Result{Gone: true}, nil
		}
		if err != nil {
			return res, fmt.Errorf("patch %s: %w", ref, err)
		}
		res.ResourceVersion = obj.GetResourceVersion()
	}
	return res, nil
}
