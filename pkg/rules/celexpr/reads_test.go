package celexpr

import (
	"reflect"
	"testing"
)

// TestCELReads checks the object paths read from expressions' ASTs, which
// say what a cache must keep of objects.
func TestCELReads(t *testing.T) {
	tests := []struct {
		src       string
		reads     [][]string
		namespace [][]string
	}{
		{"object.spec.replicas > 2", [][]string{{"spec", "replicas"}}, nil},
		{"has(object.spec.paused)", [][]string{{"spec", "paused"}}, nil},
		{"object.metadata.?labels[?'app'].orValue('') == 'web'", [][]string{{"metadata", "labels", "app"}}, nil},
		{"'app' in object.metadata.labels", [][]string{{"metadata", "labels", "app"}}, nil},
		{"object.spec['template'].spec.containers.exists(c, c.image.startsWith('x'))",
			[][]string{{"spec", "template", "spec", "containers"}}, nil},
		{"object.spec.selector == object.spec.template.metadata.labels",
			[][]string{{"spec", "selector"}, {"spec", "template", "metadata", "labels"}}, nil},
		{"namespaceObject.metadata.?labels[?'env'].orValue('') == 'prod' && object.spec.replicas > 0",
			[][]string{{"spec", "replicas"}}, [][]string{{"metadata", "labels", "env"}}},
		{"object.spec.items[0] == 1", [][]string{{"spec", "items"}}, nil},
		{"object == object", [][]string{{}, {}}, nil},
	}
	for _, tc := range tests {
		e, err := Compile(tc.src, BoolType)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if !reflect.DeepEqual(e.Reads, tc.reads) || !reflect.DeepEqual(e.NamespaceReads, tc.namespace) {
			t.Errorf("%s: reads %q, namespace %q; want %q, %q", tc.src, e.Reads, e.NamespaceReads, tc.reads, tc.namespace)
		}
	}
}
