package patch

import (
	"encoding/json"

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

// Requests returns the writes that make change on obj (a decoded object).
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
func Requests(obj map[string]any, change Change) ([]Request, error) {
	md, _ := obj["metadata"].(map[string]any)
	if mf, _ := md["managedFields"].([]any); len(mf) > 0 {
		body, err := change.MergePatch()
		if err != nil {
			return nil, err
		}
		return []Request{{Type: types.MergePatchType, Body: body}}, nil
	}
	sets, deletes := change.split()
	var out []Request
	if !sets.Empty() {
		applied := map[string]any{}
		for _, k := range []string{"name", "namespace", "resourceVersion"} {
			if v, ok := md[k]; ok && v != "" {
				applied[k] = v
			}
		}
		if len(sets.Annotations) > 0 {
			applied["annotations"] = sets.Annotations
		}
		if len(sets.Labels) > 0 {
			applied["labels"] = sets.Labels
		}
		body, err := json.Marshal(map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": applied})
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
