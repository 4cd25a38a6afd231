package rbac

import (
	"reflect"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// A rule is confined to its namespaces only when it names them all
// literally.
func TestConfinedTo(t *testing.T) {
	tests := []struct {
		namespaces []string
		want       []string
		ok         bool
	}{
		{namespaces: nil},
		{namespaces: []string{"a", "b"}, want: []string{"a", "b"}, ok: true},
		{namespaces: []string{"a", "b*"}},
		{namespaces: []string{"a?"}},
		{namespaces: []string{"[ab]"}},
		{namespaces: []string{`\a`}},
	}
	for _, tc := range tests {
		got, ok := ConfinedTo(&rulefile.Rule{Namespaces: tc.namespaces})
		if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ConfinedTo(%q) = %q, %v; want %q, %v", tc.namespaces, got, ok, tc.want, tc.ok)
		}
	}
}

// check asks what rbac grants: the informer's verbs where run lists, the
// writes where the rule confines them.
func TestNeeds(t *testing.T) {
	confined := &rulefile.Rule{Namespaces: []string{"a", "b"}}
	everywhere := &rulefile.Rule{Namespaces: []string{"a*"}}
	tests := []struct {
		name       string
		rule       *rulefile.Rule
		namespaced bool
		namespace  string
		want       []Access
	}{
		{name: "confined", rule: confined, namespaced: true,
			want: []Access{{"get", "a"}, {"get", "b"}, {"list", ""}, {"watch", ""}, {"patch", "a"}, {"patch", "b"}}},
		{name: "a glob", rule: everywhere, namespaced: true,
			want: []Access{{"get", ""}, {"list", ""}, {"watch", ""}, {"patch", ""}}},
		{name: "limited by -n", rule: confined, namespaced: true, namespace: "c",
			want: []Access{{"get", "c"}, {"list", "c"}, {"watch", "c"}, {"patch", "c"}}},
		{name: "cluster-scoped", rule: confined, namespace: "c",
			want: []Access{{"get", ""}, {"list", ""}, {"watch", ""}, {"patch", ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Needs(tc.rule, tc.namespaced, tc.namespace); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Needs = %v, want %v", got, tc.want)
			}
		})
	}
}
