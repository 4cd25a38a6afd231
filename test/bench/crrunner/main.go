package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The annotation every object must carry, as in kube-annotator's rules.
const (
	annotationKey   = "sample-controller"
	annotationValue = "True"
)

// kinds are the benchmark's four resources.
var kinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	{Version: "v1", Kind: "Pod"},
	{Group: "ship.nwiizo.dev", Version: "v1beta1", Kind: "Frigate"},
}

func main() {
	// controller-runtime registers --kubeconfig on the default flag set.
	workers := flag.Int("workers", 8, "MaxConcurrentReconciles of each controller")
	cacheReads := flag.Bool("cache-reads", false, "read unstructured objects from the manager's cache (client.CacheOptions{Unstructured: true}) instead of controller-runtime's default, a GET to the API server")
	flag.Parse()
	if err := run(*workers, *cacheReads); err != nil {
		fmt.Fprintln(os.Stderr, "crrunner:", err)
		os.Exit(1)
	}
}

func run(workers int, cacheReads bool) error {
	ctrl.SetLogger(klog.NewKlogr())
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	// controller-runtime's default already; set so that nobody wonders.
	cfg.QPS, cfg.Burst = -1, 0
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
		Client:                 client.Options{Cache: &client.CacheOptions{Unstructured: cacheReads}},
	})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	for _, gvk := range kinds {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		err := ctrl.NewControllerManagedBy(mgr).
			For(obj).
			Named(strings.ToLower(gvk.Kind)).
			WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
			Complete(&annotator{client: mgr.GetClient(), gvk: gvk})
		if err != nil {
			return fmt.Errorf("controller for %s: %w", gvk.Kind, err)
		}
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

// annotator reconciles the objects of one kind.
type annotator struct {
	client client.Client
	gvk    schema.GroupVersionKind
}

// Reconcile gets the object, and merge-patches the annotation when the
// object does not carry it.
func (a *annotator) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(a.gvk)
	if err := a.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if obj.GetAnnotations()[annotationKey] == annotationValue {
		return ctrl.Result{}, nil
	}
	orig := obj.DeepCopy()
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[annotationKey] = annotationValue
	obj.SetAnnotations(annotations)
	if err := a.client.Patch(ctx, obj, client.MergeFrom(orig)); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, nil
}
