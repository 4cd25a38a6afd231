package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// The caches of ruled resources and of namespaces keep the annotations the
// controller reads whatever the rules say: without them, an object or a
// namespace that opts out would be written.
func TestCacheKeepsControlAnnotations(t *testing.T) {
	for _, r := range []rules.Resource{
		{GVR: configMaps, Kind: "ConfigMap", Namespaced: true},
		{GVR: namespacesGVR, Kind: "Namespace"},
	} {
		for _, key := range rules.ControlAnnotations {
			in := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x",
				Annotations: map[string]string{key: "true", "unrelated": "u"}}}
			out, err := metadataTransform(reconcile.FieldManager, r)(in)
			if err != nil {
				t.Fatal(err)
			}
			if got := out.(*metav1.PartialObjectMetadata).Annotations[key]; got != "true" {
				t.Errorf("%s cache: annotation %s = %q, want it kept", rules.GVRString(r.GVR), key, got)
			}
		}
	}
}
