package celexpr

import "testing"

// TestRebase checks that Rebase replaces each reference to object, and
// nothing else: not a field or string named object, nor namespaceObject.
func TestRebase(t *testing.T) {
	const root = "object.spec.template"
	tests := []struct{ in, want, err string }{
		{in: "has(object.spec.volumes)", want: "has((object.spec.template).spec.volumes)"},
		{in: `object.spec.volumes.exists(v, has(v.emptyDir)) && object.metadata.?labels["x"].orValue("") == "object"`,
			want: `(object.spec.template).spec.volumes.exists(v, has(v.emptyDir)) && (object.spec.template).metadata.?labels["x"].orValue("") == "object"`},
		{in: `namespaceObject.metadata.name == "é" && object.x.object == 1`, want: `namespaceObject.metadata.name == "é" && (object.spec.template).x.object == 1`},
		{in: "[1].exists(object, object == 1)", err: "a comprehension variable named object hides the object"},
	}
	for _, tc := range tests {
		got, err := Rebase(tc.in, root)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("Rebase(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Rebase(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
