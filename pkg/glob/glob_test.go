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

func TestMatchKey(t *testing.T) {
	for _, tc := range []struct {
		glob, key string
		want      bool
	}{
		{"*", "team", true},
		{"*", "example.com/team", true},
		{"example.com/*", "example.com/team", true},
		{"example.com/*", "example.org/team", false},
		{"*.example.com/*", "cost.example.com/center", true},
		{"team-?", "team-a", true},
		{"team", "team-a", false},
		{"kubernetes.io/metadata.name", "kubernetes.io/metadata.name", true},
		{"[", "team", false},
	} {
		if got := MatchKey(tc.glob, tc.key); got != tc.want {
			t.Errorf("MatchKey(%q, %q) = %v, want %v", tc.glob, tc.key, got, tc.want)
		}
	}
}
