package objcache

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// The caches of ruled resources and of namespaces keep the annotations the
// controller reads whatever the rules say: without them, an object or a
// namespace that opts out would be written.
func TestCacheKeepsControlAnnotations(t *testing.T) {
	ruled := fixture.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n").Targets[rulestest.ConfigMaps.GVR].Projection()
	for _, tc := range []struct {
		r    source.Resource
		keep *projection.Projection // what a rule needs of a ruled resource; every key of namespaces
	}{
		{rulestest.ConfigMaps, &ruled},
		{rulestest.Namespaces, nil},
	} {
		for _, key := range rules.ControlAnnotations {
			in := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "x",
				Annotations: map[string]string{key: "true", "unrelated": "u"}}}
			out, err := MetadataTransform(reconcile.FieldManager, tc.r, tc.keep, NewInterner())(in)
			if err != nil {
				t.Fatal(err)
			}
			if got := out.(Object).GetAnnotations()[key]; got != "true" {
				t.Errorf("%s cache: annotation %s = %q, want it kept", source.GVRString(tc.r.GVR), key, got)
			}
		}
	}
}
