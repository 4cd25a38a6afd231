package patch_test

import (
	"encoding/json"
	"maps"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

// planInput is one case of FuzzPlan, read from lines of the form
// "<what> <key>[=<value>]": what is c (the object carries key=value), o
// (the controller owns key), d (the rules want key=value) or r (the rules
// remove key); an "l" after it ("cl", "ol", …) makes it a label.
type planInput struct {
	annotations, labels map[string]string
	owned               patch.Owned
	desired             patch.Desired
}

func parsePlanInput(data string) planInput {
	in := planInput{annotations: map[string]string{}, labels: map[string]string{}}
	for line := range strings.Lines(data) {
		what, kv, ok := strings.Cut(strings.TrimRight(line, "\n"), " ")
		if !ok || len(what) == 0 || len(what) > 2 || (len(what) == 2 && what[1] != 'l') {
			continue
		}
		label := len(what) == 2
		k, v, _ := strings.Cut(kv, "=")
		switch what[0] {
		case 'c':
			if label {
				in.labels[k] = v
			} else {
				in.annotations[k] = v
			}
		case 'o':
			if label {
				in.owned.Labels = set(in.owned.Labels, k)
			} else {
				in.owned.Annotations = set(in.owned.Annotations, k)
			}
		case 'd':
			if label {
				in.desired.Labels = put(in.desired.Labels, k, v)
			} else {
				in.desired.Annotations = put(in.desired.Annotations, k, v)
			}
		case 'r':
			if label {
				in.desired.RemoveLabels = append(in.desired.RemoveLabels, k)
			} else {
				in.desired.RemoveAnnotations = append(in.desired.RemoveAnnotations, k)
			}
		}
	}
	return in
}

func put(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

func set(m map[string]bool, k string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[k] = true
	return m
}

// FuzzPlan checks the desired-state computation: applying Plan's change
// gives every wanted key its value, deletes exactly the removed and the
// owned-but-unwanted keys, leaves every other key alone, and planning
// again on the result changes nothing; the merge patch carries exactly
// the change.
func FuzzPlan(f *testing.F) {
	for _, seed := range []string{
		"",
		"d sample-controller=True\n",
		"c sample-controller=False\nd sample-controller=True\n",
		"c a=1\no a\nc user=x\n",
		"c a=1\nr a\nd a=2\n",
		"cl team=web\nol team\ndl tier=db\nrl old\ncl old=1\n",
		"c a=\"q\" <b> 日本\nd a=\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		if !utf8.ValidString(data) {
			// Keys and values come from the API server and from validated
			// rules, all UTF-8; JSON cannot carry anything else unchanged.
			return
		}
		in := parsePlanInput(data)
		anns0, lbls0 := maps.Clone(in.annotations), maps.Clone(in.labels)
		change := patch.Plan(in.annotations, in.labels, in.owned, in.desired)
		if !maps.Equal(in.annotations, anns0) || !maps.Equal(in.labels, lbls0) {
			t.Fatalf("Plan modified its input")
		}
		anns := applied(t, "annotations", in.annotations, change.Annotations, in.owned.Annotations, in.desired.Annotations, in.desired.RemoveAnnotations)
		lbls := applied(t, "labels", in.labels, change.Labels, in.owned.Labels, in.desired.Labels, in.desired.RemoveLabels)
		if again := patch.Plan(anns, lbls, in.owned, in.desired); !again.Empty() {
			t.Errorf("Plan of the result is not empty: %s", dump(again))
		}
		if change.Empty() {
			return
		}
		body, err := change.MergePatch()
		if err != nil {
			t.Fatal(err)
		}
		var decoded struct {
			Metadata patch.Change `json:"metadata"`
		}
		if err := json.Unmarshal(body, &decoded); err != nil || !reflect.DeepEqual(decoded.Metadata, change) {
			t.Errorf("merge patch %s does not decode to the change %s (%v)", body, dump(change), err)
		}
	})
}

// applied applies one kind of a change to current, checks that the result
// is what the rules say, and returns it.
func applied(t *testing.T, kind string, current map[string]string, change map[string]*string, owned map[string]bool, want map[string]string, remove []string) map[string]string {
	t.Helper()
	out := maps.Clone(current)
	for k, v := range change {
		if v == nil {
			if _, ok := out[k]; !ok {
				t.Errorf("%s: deletes %q, which is absent", kind, k)
			}
			delete(out, k)
		} else {
			out[k] = *v
		}
	}
	for k, v := range want {
		if got, ok := out[k]; !ok || got != v {
			t.Errorf("%s: %q = %q after the change, want %q", kind, k, got, v)
		}
	}
	for k := range out {
		_, had := current[k]
		if _, wanted := want[k]; !had && !wanted {
			t.Errorf("%s: %q set, although no rule wants it", kind, k)
		}
	}
	gone := map[string]bool{}
	for _, k := range remove {
		gone[k] = true
	}
	for k := range owned {
		gone[k] = true
	}
	for k, v := range current {
		_, wanted := want[k]
		got, kept := out[k]
		switch {
		case wanted:
		case gone[k] && kept:
			t.Errorf("%s: %q kept, want it deleted", kind, k)
		case !gone[k] && (!kept || got != v):
			t.Errorf("%s: %q changed, although no rule names it and the controller does not own it", kind, k)
		}
	}
	return out
}
