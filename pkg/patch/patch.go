// Package patch computes, without side effects, how an object's metadata
// must change to satisfy the rules, and encodes that change as a JSON merge
// patch that carries only the changed keys.
package patch

import (
	"encoding/json"
	"errors"
)

// Annotations returns the annotations from desired whose value in current
// differs or is missing, or nil when current already satisfies desired.
// current is the object's metadata.annotations as decoded from JSON (values
// are strings); it is only read.
func Annotations(current map[string]any, desired map[string]string) map[string]string {
	var changed map[string]string
	for k, want := range desired {
		if have, ok := current[k].(string); ok && have == want {
			continue
		}
		if changed == nil {
			changed = make(map[string]string, len(desired))
		}
		changed[k] = want
	}
	return changed
}

// MergePatch encodes a JSON merge patch (RFC 7386) that sets the given
// annotations and leaves every other field, including other annotations,
// untouched. An empty set is an error: encoded as null, it would delete
// every annotation.
func MergePatch(annotations map[string]string) ([]byte, error) {
	if len(annotations) == 0 {
		return nil, errors.New("merge patch: no annotations to set")
	}
	type metadata struct {
		Annotations map[string]string `json:"annotations"`
	}
	return json.Marshal(struct {
		Metadata metadata `json:"metadata"`
	}{metadata{annotations}})
}
