package harness

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// CRDs is the CustomResourceDefinition resource.
var CRDs = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// FrigateCRDInGroup returns the Kubebuilder Frigate CRD moved to group,
// so that a test can install and delete it without touching the Frigate
// CRD other tests use; and the GVR of its frigates.
func FrigateCRDInGroup(t testing.TB, group string) (string, schema.GroupVersionResource) {
	t.Helper()
	data, err := os.ReadFile(CRDFile())
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(data), "ship.nwiizo.dev", group),
		schema.GroupVersionResource{Group: group, Version: "v1beta1", Resource: "frigates"}
}

// InstallCRD creates the CRD in doc, retrying while a CRD of the same name
// is still being deleted.
func (e *Env) InstallCRD(t testing.TB, doc string) {
	t.Helper()
	obj := FromYAML(t, doc)
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := e.Dynamic.Resource(CRDs).Create(ctx, obj.DeepCopy(), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("install CRD %s: %v", obj.GetName(), err)
	}
}

// DeleteCRD deletes the CRD named name and waits until it is gone.
func (e *Env) DeleteCRD(t testing.TB, name string) {
	t.Helper()
	if err := e.Dynamic.Resource(CRDs).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete CRD %s: %v", name, err)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := e.Dynamic.Resource(CRDs).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("CRD %s not gone: %v", name, err)
	}
}

// CreateWhenServed creates obj, retrying until the API server serves its
// resource (a CRD just installed is not served at once).
func (e *Env) CreateWhenServed(t testing.TB, gvr schema.GroupVersionResource, namespace string, doc string) {
	t.Helper()
	obj := FromYAML(t, doc)
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := e.Dynamic.Resource(gvr).Namespace(namespace).Create(ctx, obj.DeepCopy(), metav1.CreateOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("create %s %s/%s: %v", gvr.Resource, namespace, obj.GetName(), err)
	}
}
