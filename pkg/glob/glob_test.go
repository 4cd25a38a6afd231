package glob

import "testing"

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		g  string
		ok bool
	}{
		{"team-*", true}, {"kube-system", true}, {"a?c", true}, {"[a-z]*", true},
		{"[", false}, {"team-[", false}, {`\`, false},
	} {
		if err := Check(tc.g); (err == nil) != tc.ok {
			t.Errorf("Check(%q) = %v, want ok %v", tc.g, err, tc.ok)
		}
	}
}

func TestFirstAndAny(t *testing.T) {
	globs := []string{"kube-*", "team-?", "[", "shop"}
	for _, tc := range []struct {
		name, first string
		ok          bool
	}{
		{"kube-system", "kube-*", true},
		{"team-a", "team-?", true},
		{"team-ab", "", false},
		{"shop", "shop", true},
		{"[", "", false}, // a glob that is not one matches nothing
		{"", "", false},
	} {
		first, ok := First(globs, tc.name)
		if first != tc.first || ok != tc.ok || Any(globs, tc.name) != tc.ok {
			t.Errorf("First(%q) = %q, %v; want %q, %v", tc.name, first, ok, tc.first, tc.ok)
		}
	}
	if Any(nil, "x") {
		t.Error("no glob matched x")
	}
}
