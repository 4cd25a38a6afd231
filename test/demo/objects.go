package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

const (
	namespace     = "demo"
	deployment    = "web"
	replicas      = 2
	annotationKey = "sample-controller"
	annotationVal = "True"
)

// deploymentYAML is the demo's Deployment. Nothing schedules or runs its
// Pods here (there is no scheduler or kubelet): they stay Pending, which is
// all the demo needs, since it is about their metadata.
var deploymentYAML = fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s, labels: {app: %[1]s}}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: web, image: nginx:1.27}]}
`, deployment, namespace, replicas)

func decode(doc []byte) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(doc, &u.Object); err != nil {
		return nil, err
	}
	return u, nil
}

func create(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, u *unstructured.Unstructured) error {
	_, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{FieldManager: "demo"})
	if err != nil {
		return fmt.Errorf("create %s %s: %w", strings.ToLower(u.GetKind()), u.GetName(), err)
	}
	return nil
}

// createNamespace creates the demo namespace and waits up to saWait for
// kube-controller-manager to give it its "default" ServiceAccount, which it
// creates itself if none comes.
func createNamespace(ctx context.Context, dyn dynamic.Interface, saWait time.Duration) error {
	ns := h.Object("v1", "Namespace", "", namespace)
	if err := create(ctx, dyn, h.Namespaces, ns); err != nil {
		return err
	}
	logf("Created namespace %s; waiting for kube-controller-manager to create its default ServiceAccount", namespace)
	start := time.Now()
	for time.Since(start) < saWait {
		_, err := dyn.Resource(h.SAs).Namespace(namespace).Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			logf("ServiceAccount %s/default created by kube-controller-manager after %v", namespace, since(start))
			return nil
		}
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("get serviceaccount %s/default: %w", namespace, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	logf("WARNING: no ServiceAccount %s/default after %v; creating it (is kube-controller-manager's serviceaccount-controller running?)", namespace, saWait)
	return create(ctx, dyn, h.SAs, h.Object("v1", "ServiceAccount", namespace, "default"))
}

// createWorkloads creates frigate-sample from deploy/crd and the Deployment.
func createWorkloads(ctx context.Context, dyn dynamic.Interface) error {
	path := filepath.Join(h.RepoRoot(), "deploy", "crd", "frigate-sample.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	frigate, err := decode(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	frigate.SetNamespace(namespace)
	if err := create(ctx, dyn, h.Frigates, frigate); err != nil {
		return err
	}
	logf("Created frigate %s/%s from %s", namespace, frigate.GetName(), relPath(path))
	dep, err := decode([]byte(deploymentYAML))
	if err != nil {
		return err
	}
	if err := create(ctx, dyn, h.Deployments, dep); err != nil {
		return err
	}
	logf("Created deployment %s/%s with %d replicas (its Pods will stay Pending: there is no scheduler or kubelet)", namespace, deployment, replicas)
	return nil
}

// annotated reports whether every object the demo expects carries the
// annotation, and otherwise a short account of what is still missing.
func annotated(ctx context.Context, dyn dynamic.Interface) (bool, string, error) {
	has := func(u *unstructured.Unstructured) bool {
		return u.GetAnnotations()[annotationKey] == annotationVal
	}
	var missing []string
	for _, o := range []struct {
		gvr  schema.GroupVersionResource
		name string
	}{{h.Deployments, deployment}, {h.Frigates, "frigate-sample"}} {
		u, err := dyn.Resource(o.gvr).Namespace(namespace).Get(ctx, o.name, metav1.GetOptions{})
		if err != nil {
			return false, "", fmt.Errorf("get %s %s: %w", o.gvr.Resource, o.name, err)
		}
		if !has(u) {
			missing = append(missing, fmt.Sprintf("%s %s not annotated", o.gvr.Resource, o.name))
		}
	}
	for _, o := range []struct {
		gvr  schema.GroupVersionResource
		want int
	}{{h.ReplicaSets, 1}, {h.Pods, replicas}} {
		list, err := dyn.Resource(o.gvr).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + deployment})
		if err != nil {
			return false, "", fmt.Errorf("list %s: %w", o.gvr.Resource, err)
		}
		n := 0
		for i := range list.Items {
			if has(&list.Items[i]) {
				n++
			}
		}
		if len(list.Items) != o.want || n != o.want {
			missing = append(missing, fmt.Sprintf("%s: %d of %d exist, %d annotated", o.gvr.Resource, len(list.Items), o.want, n))
		}
	}
	return len(missing) == 0, strings.Join(missing, "; "), nil
}

// waitAnnotated polls until annotated says yes, for at most timeout. It
// gives up early when failed reports that a process the demo depends on
// has died.
func waitAnnotated(ctx context.Context, dyn dynamic.Interface, timeout time.Duration, failed func() error) error {
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, status, err := annotated(ctx, dyn)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return err
		case ok:
			return nil
		case status != last:
			logf("Waiting: %s", status)
			last = status
		}
		if err := failed(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("objects not annotated %s=%q after %v: %s", annotationKey, annotationVal, timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
