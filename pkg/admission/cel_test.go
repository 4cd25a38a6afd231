package admission

import (
	"math/rand/v2"
	"path"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestGlobRegexp checks that a glob and its translation match the same
// names, over globs and names of the characters that matter.
//
// The random globs are compared on ASCII names only. There path.Match's *
// advances a byte at a time, so it can stop inside a multi-byte rune and
// leave its bytes to ? ("*??" matches "本"), where the translation, like
// CEL, reads runes. Names and namespaces, which the globs match, are
// ASCII, and the two agree there.
func TestGlobRegexp(t *testing.T) {
	globs := []string{"*", "team-*", "*-prod", "a?c", "[a-c]*", "[^a-c]x", "[]", "[a-]", "x\\*y", "kube-*", "k[ae]be-[0-9][0-9]",
		"*a*b*", "[\\]]", "[^-]", "a\\", "[z-a]", "日本*", "[日-本]", "?", "", "a/b", "*/x", "[^/]"}
	ascii := []string{"", "a", "abc", "team-a", "team-", "x-prod", "prod", "axc", "a/c", "bzz", "dx", "ax", "x*y", "xzy",
		"kube-system", "kabe-12", "kbbe-12", "ab", "aab", "]", "-", "a/b", "q/x", "/"}
	all := append([]string{"日本語", "本"}, ascii...)
	fixed := len(globs)
	for range 300 {
		var b strings.Builder
		for range rand.IntN(8) {
			b.WriteByte("ab*?[]^-\\/x"[rand.IntN(11)])
		}
		globs = append(globs, b.String())
	}
	for i, g := range globs {
		names := all
		if i >= fixed {
			names = ascii
		}
		re, err := globRegexp(g)
		_, matchErr := path.Match(g, "")
		if (err != nil) != (matchErr != nil) {
			t.Errorf("globRegexp(%q) error = %v, path.Match error = %v", g, err, matchErr)
			continue
		}
		if err != nil {
			continue
		}
		compiled, err := regexp.Compile(re)
		if err != nil {
			t.Errorf("globRegexp(%q) = %q, which does not compile: %v", g, re, err)
			continue
		}
		for _, n := range names {
			want, _ := path.Match(g, n)
			if got := compiled.MatchString(n); got != want {
				t.Errorf("glob %q as %q matches %q: %v, path.Match says %v", g, re, n, got, want)
			}
		}
	}
}

func TestLabelSelector(t *testing.T) {
	tests := []struct {
		sel  string
		want *metav1.LabelSelector
	}{
		{"app=web,tier!=db", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}},
			{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"db"}}}}},
		{"env in (a,b),!legacy,team", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
			{Key: "legacy", Operator: metav1.LabelSelectorOpDoesNotExist},
			{Key: "team", Operator: metav1.LabelSelectorOpExists}}}},
		{"replicas>2", nil},
	}
	for _, tc := range tests {
		got, err := labelSelector(tc.sel)
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != tc.want.String() {
			t.Errorf("labelSelector(%q) = %v, want %v", tc.sel, got, tc.want)
		}
		if got == nil {
			continue
		}
		// The API server's reading of the LabelSelector selects as the rule does.
		back, err := metav1.LabelSelectorAsSelector(got)
		parsed, _ := labels.Parse(tc.sel)
		for _, set := range labelSets {
			if err != nil || back.Matches(set) != parsed.Matches(set) {
				t.Errorf("labelSelector(%q) on %v: %v, rule: %v (%v)", tc.sel, set, back.Matches(set), parsed.Matches(set), err)
			}
		}
	}
}

// labelSets are label sets to try selectors on.
var labelSets = []labels.Set{
	nil, {"app": "web"}, {"app": "api"}, {"app": "web", "tier": "db"}, {"app": "web", "tier": "fe"},
	{"env": "a", "team": "x"}, {"env": "c", "team": "x"}, {"env": "b", "team": "x", "legacy": "y"},
	{"replicas": "3"}, {"replicas": "2"}, {"replicas": "x"}, {"replicas": "-5"},
}

func TestJSONPathValue(t *testing.T) {
	tests := []struct {
		template      string
		present, text string
		err           string
	}{
		{template: "{.spec.x}", present: "object.?spec.?x.hasValue()", text: "string(object.?spec.?x.value())"},
		{template: "v{.a[2].b}!", present: "object.?a[?2].?b.hasValue()", text: `"v" + string(object.?a[?2].?b.value()) + "!"`},
		{template: "{.metadata.namespace}", present: `object.?metadata[?"namespace"].hasValue()`, text: `string(object.?metadata[?"namespace"].value())`},
		{template: "{.a.b-c}", present: `object.?a[?"b-c"].hasValue()`, text: `string(object.?a[?"b-c"].value())`},
		{template: "{.a[*]}", err: "a slice, a wildcard or a negative index cannot be read at admission"},
		{template: "{.a[-1]}", err: "a slice, a wildcard or a negative index cannot be read at admission"},
		{template: "{.a[0:2]}", err: "a slice, a wildcard or a negative index cannot be read at admission"},
		{template: "{.a.*}", err: "a wildcard cannot be read at admission"},
		{template: "{..a}", err: "recursive descent (..) cannot be read at admission"},
		{template: "{.a[?(@.b=='c')]}", err: "a filter [?(...)] cannot be read at admission"},
		{template: "{.a['x','y']}", err: "a union [a,b] cannot be read at admission"},
		{template: "{range .a[*]}{.b}{end}", err: "{range} cannot be read at admission"},
		{template: "text", err: `template "text" reads nothing`},
	}
	for _, tc := range tests {
		v, err := jsonPathValue(tc.template)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("jsonPathValue(%q) error = %v, want %q", tc.template, err, tc.err)
		case tc.err == "" && (err != nil || v.present != tc.present || v.text != tc.text):
			t.Errorf("jsonPathValue(%q) = %+v, %v; want {%s %s}", tc.template, v, err, tc.present, tc.text)
		}
	}
}
