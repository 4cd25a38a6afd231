package admission

import (
	"bytes"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Unstructured is obj, a policy or binding from Translate, as the API server
// stores it in JSON, without the empty creationTimestamp a typed object
// carries: the form that Manifests prints and that is applied.
func Unstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}

// Manifests renders policies as one YAML stream, each policy followed by its
// binding: deterministic, and ready for `kubectl apply -f -`.
func Manifests(policies []Policy) ([]byte, error) {
	var b bytes.Buffer
	for _, p := range policies {
		for _, obj := range []runtime.Object{p.Policy, p.Binding} {
			u, err := Unstructured(obj)
			if err != nil {
				return nil, err
			}
			data, err := yaml.Marshal(u.Object)
			if err != nil {
				return nil, err
			}
			if b.Len() > 0 {
				b.WriteString("---\n")
			}
			b.Write(data)
		}
	}
	return b.Bytes(), nil
}
