package owners

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-annotator/kube-annotator/test/bench/child"
	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/workload"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// The namespaces of the phase: the relabelled Deployment and, beside it,
// part of the control group; the rest of the control group; and the
// Deployments with no replicas that only add owners to the caches.
const (
	Namespace        = "bench-owners"
	ControlNamespace = "bench-owners-control"
	IdleNamespace    = "bench-owners-idle"
)

// Target is the relabelled Deployment, and the app label its Pods carry.
const Target = "web"

// controlDeployments are the control group's Deployments, by namespace,
// with controlReplicas Pods each, and bare Pods in Namespace: none of
// them may be written when Target is relabelled.
var controlDeployments = []types.NamespacedName{
	{Namespace: Namespace, Name: "api"},
	{Namespace: ControlNamespace, Name: "web"},
	{Namespace: ControlNamespace, Name: "worker"},
}

const (
	controlReplicas = 10
	barePods        = 2
)

// kcmQPS lifts kube-controller-manager's client-side rate limit (20 QPS
// by default), so that its ReplicaSet controller creates thousands of
// Pods in seconds, not minutes.
var kcmQPS = []string{"--kube-api-qps=2000", "--kube-api-burst=4000"}

// startControllerManager starts kube-controller-manager, with the
// controllers harness.ControllerManagerControllers names, as a child
// process logging into the benchmark's directory.
func startControllerManager(b *rig.Bench) (*child.Process, error) {
	args := append(h.ControllerManagerArgs(b.Env.Kubeconfig), kcmQPS...)
	return child.Start("kube-controller-manager", filepath.Join(b.Dir, "kube-controller-manager.log"), nil,
		filepath.Join(h.AssetsDir(), "kube-controller-manager"), args...)
}

// createNamespaces creates the phase's namespaces, each with the
// "default" ServiceAccount Pods need, which kube-controller-manager may
// have created first.
func createNamespaces(ctx context.Context, b *rig.Bench) error {
	for _, ns := range []string{Namespace, ControlNamespace, IdleNamespace} {
		if _, err := b.Dynamic.Resource(h.Namespaces).Create(ctx, h.Object("v1", "Namespace", "", ns), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
		_, err := b.Dynamic.Resource(h.SAs).Namespace(ns).Create(ctx, h.Object("v1", "ServiceAccount", ns, "default"), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create serviceaccount %s/default: %w", ns, err)
		}
	}
	return nil
}

// deployment is a Deployment of replicas Pods labelled app=name, itself
// labelled team=team.
func deployment(namespace, name, team string, replicas int) *unstructured.Unstructured {
	labels := map[string]any{"app": name}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": name, "namespace": namespace, "labels": map[string]any{"team": team}},
		"spec": map[string]any{
			"replicas": int64(replicas),
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "registry.invalid/app:1"}}},
			},
		},
	}}
}

// barePod is a Pod in Namespace that no owner manages.
func barePod(name string) *unstructured.Unstructured {
	pod := h.Object("v1", "Pod", Namespace, name)
	pod.Object["spec"] = map[string]any{"containers": []any{map[string]any{"name": "app", "image": "registry.invalid/app:1"}}}
	return pod
}

// createWorkloads creates Target with pods replicas and the control
// group, all labelled team=a, and waits until the watch has seen every
// Pod.
func createWorkloads(ctx context.Context, b *rig.Bench, w *podWatch, pods int) error {
	progress.Logf("Creating Deployment %s/%s with %d replicas and a control group of %d Deployments of %d and %d bare Pods", Namespace, Target, pods, len(controlDeployments), controlReplicas, barePods)
	start := time.Now()
	if err := create(ctx, b, h.Deployments, deployment(Namespace, Target, "a", pods)); err != nil {
		return err
	}
	for _, d := range controlDeployments {
		if err := create(ctx, b, h.Deployments, deployment(d.Namespace, d.Name, "a", controlReplicas)); err != nil {
			return err
		}
	}
	for i := range barePods {
		if err := create(ctx, b, h.Pods, barePod(fmt.Sprintf("bare-%d", i))); err != nil {
			return err
		}
	}
	total := pods + len(controlDeployments)*controlReplicas + barePods
	if _, err := w.waitFor(ctx, "Pods created", b.Opts.Timeout, func(s podCounts) bool { return s.all == total }, nil); err != nil {
		return err
	}
	progress.Logf("kube-controller-manager created the %d Pods in %v", total-barePods, progress.Since(start))
	return nil
}

// createIdle creates n Deployments with no replicas in IdleNamespace and
// waits until kube-controller-manager has made a ReplicaSet for each:
// owners to cache, with no Pods.
func createIdle(ctx context.Context, b *rig.Bench, n int) error {
	progress.Logf("Creating %d Deployments with no replicas in %s", n, IdleNamespace)
	start := time.Now()
	err := workload.ForEach(ctx, n, b.Opts.Clients, func(ctx context.Context, i int) error {
		return create(ctx, b, h.Deployments, deployment(IdleNamespace, fmt.Sprintf("idle-%d", i), "a", 0))
	})
	if err != nil {
		return err
	}
	deadline := time.Now().Add(b.Opts.Timeout)
	for {
		rs, err := b.Metadata.Resource(h.ReplicaSets).Namespace(IdleNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("list replicasets: %w", err)
		}
		if len(rs.Items) >= n {
			progress.Logf("Created them and their ReplicaSets in %v", progress.Since(start))
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d ReplicaSets in %s after %v", len(rs.Items), n, IdleNamespace, b.Opts.Timeout)
		}
		if err := progress.Sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
}

// countOwners counts the Deployments and ReplicaSets in the cluster:
// the owners a controller that reads them caches.
func countOwners(ctx context.Context, b *rig.Bench) (int, error) {
	n := 0
	for _, gvr := range []schema.GroupVersionResource{h.Deployments, h.ReplicaSets} {
		err := workload.EachObject(ctx, b.Metadata, gvr, func(metav1.PartialObjectMetadata) error { n++; return nil })
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// controlVersions returns the resourceVersion of every Pod of the
// control group, by namespace and name: a write to one changes it.
func controlVersions(ctx context.Context, b *rig.Bench) (map[string]string, error) {
	out := map[string]string{}
	for _, ns := range []string{Namespace, ControlNamespace} {
		list, err := b.Metadata.Resource(h.Pods).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list pods in %s: %w", ns, err)
		}
		for _, m := range list.Items {
			if ns == Namespace && m.Labels["app"] == Target {
				continue
			}
			out[ns+"/"+m.Name] = m.ResourceVersion
		}
	}
	return out, nil
}

// changed returns the keys of before whose value after differs or lacks.
func changed(before, after map[string]string) []string {
	var out []string
	for k, v := range before {
		if after[k] != v {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func create(ctx context.Context, b *rig.Bench, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	if _, err := b.Dynamic.Resource(gvr).Namespace(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create %s %s/%s: %w", gvr.Resource, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
