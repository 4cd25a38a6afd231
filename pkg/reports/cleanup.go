package reports

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"
)

// Cleanup deletes every Report and ClusterReport that fieldManager wrote,
// as run does when --reports is off. A server that does not serve the
// API, or that forbids listing it, has none to delete: that is logged
// once, and is not an error.
func Cleanup(ctx context.Context, client dynamic.Interface, fieldManager string) error {
	logger := klog.FromContext(ctx)
	for _, gvr := range []schema.GroupVersionResource{ReportResource, ClusterReportResource} {
		list, err := listOwned(ctx, client, gvr, fieldManager)
		switch {
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
			logger.V(2).Info("Reports not served: none to delete", "resource", gvr.Resource)
			continue
		case apierrors.IsForbidden(err):
			logger.V(1).Info("Reports written before cannot be listed, and are left", "resource", gvr.Resource, "err", err)
			continue
		case err != nil:
			return err
		}
		for _, o := range list {
			res := client.Resource(gvr).Namespace(o.GetNamespace())
			if err := res.Delete(ctx, o.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete %s %s: %w", gvr.Resource, klog.KObj(&o), err)
			}
			logger.Info("Deleted report", "resource", gvr.Resource, "report", klog.KObj(&o))
		}
	}
	return nil
}

// listOwned lists the reports of gvr labelled as kube-annotator's whose
// fields fieldManager manages.
func listOwned(ctx context.Context, client dynamic.Interface, gvr schema.GroupVersionResource, fieldManager string) ([]unstructured.Unstructured, error) {
	list, err := client.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: ManagedByLabel + "=" + ManagedBy})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(list.Items, func(o unstructured.Unstructured) bool {
		return !slices.ContainsFunc(o.GetManagedFields(), func(f metav1.ManagedFieldsEntry) bool { return f.Manager == fieldManager })
	}), nil
}
