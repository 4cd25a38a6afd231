package projection

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
)

// TestCoversGlobs checks that a cache keeping the keys a glob matches
// serves rules that name such keys, or the same glob, and no other.
func TestCoversGlobs(t *testing.T) {
	keeps := Projection{Labels: sets.New("app"), LabelGlobs: []string{"team*"}, Annotations: sets.New[string]()}
	for _, tc := range []struct {
		name string
		q    Projection
		want bool
	}{
		{"a key the glob matches", Projection{Labels: sets.New("team-region")}, true},
		{"a key named", Projection{Labels: sets.New("app")}, true},
		{"the same glob", Projection{LabelGlobs: []string{"team*"}}, true},
		{"another key", Projection{Labels: sets.New("tier")}, false},
		{"another glob", Projection{LabelGlobs: []string{"example.com/*"}}, false},
		{"the glob on annotations", Projection{AnnotationGlobs: []string{"team*"}}, false},
	} {
		if got := keeps.Covers(tc.q); got != tc.want {
			t.Errorf("%s: Covers() = %v, want %v", tc.name, got, tc.want)
		}
	}
	if !Keeps(nil, []string{"example.com/*"}, "example.com/cost") || Keeps(nil, []string{"example.com/*"}, "example.org/cost") {
		t.Errorf("Keeps() does not match keys by glob.MatchKey")
	}
}
