package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
)

func TestKey(t *testing.T) {
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	tests := []struct {
		name         string
		key          Key
		obj          *unstructured.Unstructured
		wantString   string
		wantStoreKey string
	}{
		{"namespaced, core group", Key{configMaps, "ns", "a"}, fixture.ConfigMap("ns", "a", nil),
			"configmaps.v1 ns/a", "ns/a"},
		{"namespaced, named group", Key{deployments, "prod", "web"}, fixture.Object("Deployment", "prod", "web", nil),
			"deployments.v1.apps prod/web", "prod/web"},
		{"cluster-scoped", Key{namespaces, "", "kube-system"}, fixture.Object("Namespace", "", "kube-system", nil),
			"namespaces.v1 kube-system", "kube-system"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.key.String(); got != tc.wantString {
				t.Errorf("String() = %q, want %q", got, tc.wantString)
			}
			if got := tc.key.storeKey(); got != tc.wantStoreKey {
				t.Errorf("storeKey() = %q, want %q", got, tc.wantStoreKey)
			}
			// The informer's store must find the object under storeKey.
			if got, err := cache.MetaNamespaceKeyFunc(tc.obj); err != nil || got != tc.key.storeKey() {
				t.Errorf("MetaNamespaceKeyFunc(object) = %q, %v; want storeKey() %q", got, err, tc.key.storeKey())
			}
		})
	}
}
