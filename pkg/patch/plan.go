package patch

import (
	"encoding/json"
	"errors"
)

// Desired is what the rules want of one object's metadata.
type Desired struct {
	// Annotations and Labels must carry these values.
	Annotations, Labels map[string]string
	// RemoveAnnotations and RemoveLabels must be absent, whoever set them.
	RemoveAnnotations, RemoveLabels []string
	// IfAbsentAnnotations and IfAbsentLabels are the keys of Annotations
	// and Labels to set only where they are absent or owned: a present key
	// that someone else set (or changed since) keeps its value.
	IfAbsentAnnotations, IfAbsentLabels map[string]bool
}

// Owned is what the controller's field manager set on an object before.
type Owned struct {
	Annotations, Labels map[string]bool
}

// Change is a metadata change: a key mapped to its new value, or to nil
// for a key to delete. A nil Change changes nothing.
type Change struct {
	Annotations map[string]*string `json:"annotations,omitempty"`
	Labels      map[string]*string `json:"labels,omitempty"`
}

// Empty reports whether c changes nothing.
func (c Change) Empty() bool { return len(c.Annotations) == 0 && len(c.Labels) == 0 }

// Plan computes the change that takes an object's current annotations and
// labels to what d wants: keys d sets that are missing or differ get d's
// value, except keys d sets only if absent that are present and not owned;
// keys the controller owned but d no longer sets, and keys d removes, are
// deleted if present. Keys nobody asked about are not in the change, so
// they are never touched.
func Plan(annotations, labels map[string]string, owned Owned, d Desired) Change {
	return Change{
		Annotations: planKeys(annotations, owned.Annotations, d.Annotations, d.IfAbsentAnnotations, d.RemoveAnnotations),
		Labels:      planKeys(labels, owned.Labels, d.Labels, d.IfAbsentLabels, d.RemoveLabels),
	}
}

func planKeys(current map[string]string, owned map[string]bool, set map[string]string, ifAbsent map[string]bool, remove []string) map[string]*string {
	var out map[string]*string
	put := func(k string, v *string) {
		if out == nil {
			out = map[string]*string{}
		}
		out[k] = v
	}
	for k, want := range set {
		have, ok := current[k]
		if ok && ifAbsent[k] && !owned[k] {
			continue // someone else's
		}
		if !ok || have != want {
			v := want // only a key written takes an allocation
			put(k, &v)
		}
	}
	for k := range owned {
		if _, wanted := set[k]; !wanted {
			if _, present := current[k]; present {
				put(k, nil)
			}
		}
	}
	for _, k := range remove {
		if _, present := current[k]; present {
			if _, wanted := set[k]; !wanted {
				put(k, nil)
			}
		}
	}
	return out
}

// MergePatch encodes c as a JSON merge patch (RFC 7386) on metadata: it sets
// and deletes exactly c's keys and leaves every other field untouched. An
// empty change is an error, so that no request is sent for nothing.
func (c Change) MergePatch() ([]byte, error) {
	if c.Empty() {
		return nil, errors.New("merge patch: nothing to change")
	}
	return json.Marshal(struct {
		Metadata Change `json:"metadata"`
	}{c})
}
