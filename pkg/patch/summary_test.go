package patch

import "testing"

// TestSummary checks the summary of a change that logs and events show.
func TestSummary(t *testing.T) {
	v := "x"
	for _, tc := range []struct {
		ch   Change
		want string
	}{
		{Change{}, ""},
		{Change{Annotations: map[string]*string{"b": &v, "a": nil}}, "annotations -a, b"},
		{Change{Annotations: map[string]*string{"a": &v}, Labels: map[string]*string{"c": nil}}, "annotations a; labels -c"},
	} {
		if got := tc.ch.Summary(); got != tc.want {
			t.Errorf("%+v.Summary() = %q, want %q", tc.ch, got, tc.want)
		}
	}
}
