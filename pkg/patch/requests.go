package patch

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Request is one write to send: a patch of some type with its body.
type Request struct {
	Type types.PatchType
	Body []byte
	// Force is set for server-side apply: the rules name these keys, so
	// they are taken over from any other manager.
	Force bool
}

// Object is what Requests reads of the object a change is for: its
// identity and whether it has managedFields. Both *unstructured.Unstructured
// and *metav1.PartialObjectMetadata (with its TypeMeta set) are one.
type Object interface {
	metav1.Object
	GetObjectKind() schema.ObjectKind
}

// Requests returns the writes that make change on obj.
//
// Normally that is one JSON merge patch: the API server records the keys it
// sets as owned by the field manager, which is how a later Plan knows what
// it may delete. But the API server does not start tracking ownership for
// an Update of an object that has no managedFields at all (one created
// with no fields worth tracking, or before server-side apply existed). For
// such an object the keys to set are written with a server-side apply,
// which is always tracked; it carries the resourceVersion the change was
// planned against, so that it can never create an object that was deleted
// meanwhile (it fails with a conflict and is retried). Deletions, which an
// apply cannot express for keys it does not own, follow as a merge patch.
func Requests(obj Object, change Change) ([]Request, error) {
	if len(obj.GetManagedFields()) > 0 {
		body, err := change.MergePatch()
		if err != nil {
			return nil, err
		}
		return []Request{{Type: types.MergePatchType, Body: body}}, nil
	}
	sets, deletes := change.split()
	var out []Request
	if !sets.Empty() {
		body, err := applyBody(obj, sets)
		if err != nil {
			return nil, err
		}
		out = append(out, Request{Type: types.ApplyPatchType, Body: body, Force: true})
	}
	if !deletes.Empty() {
		body, err := deletes.MergePatch()
		if err != nil {
			return nil, err
		}
		out = append(out, Request{Type: types.MergePatchType, Body: body})
	}
	return out, nil
}

// applyBody is the server-side apply configuration that sets sets on obj,
// pinned to obj's resourceVersion.
func applyBody(obj Object, sets Change) ([]byte, error) {
	type metadata struct {
		Name            string             `json:"name"`
		Namespace       string             `json:"namespace,omitempty"`
		ResourceVersion string             `json:"resourceVersion,omitempty"`
		Annotations     map[string]*string `json:"annotations,omitempty"`
		Labels          map[string]*string `json:"labels,omitempty"`
	}
	apiVersion, kind := obj.GetObjectKind().GroupVersionKind().ToAPIVersionAndKind()
	return json.Marshal(struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Metadata   metadata `json:"metadata"`
	}{apiVersion, kind, metadata{
		Name: obj.GetName(), Namespace: obj.GetNamespace(), ResourceVersion: obj.GetResourceVersion(),
		Annotations: sets.Annotations, Labels: sets.Labels,
	}})
}

// split separates the keys c sets from those it deletes.
func (c Change) split() (sets, deletes Change) {
	part := func(m map[string]*string) (s, d map[string]*string) {
		for k, v := range m {
			if v == nil {
				if d == nil {
					d = map[string]*string{}
				}
				d[k] = nil
			} else {
				if s == nil {
					s = map[string]*string{}
				}
				s[k] = v
			}
		}
		return s, d
	}
	sets.Annotations, deletes.Annotations = part(c.Annotations)
	sets.Labels, deletes.Labels = part(c.Labels)
	return sets, deletes
}
