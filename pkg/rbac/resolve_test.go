package rbac

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// TestResolve checks which names of a rules file are resolved for its
// RBAC, an owner resource once, and how a name that does not resolve is said: an error
// for a rule's resource, a warning for an owner resource it reads.
func TestResolve(t *testing.T) {
	f, err := rulefile.Parse("rules.yaml", []byte(`rules:
- {name: a, resources: [pods, widgets.example.com], labels: {team: {fromOwner: {label: team, through: [replicasets.apps, rollouts.argoproj.io]}}}}
- {name: b, resources: [pods, gadgets], labels: {x: y}}
`))
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]schema.GroupVersionResource{
		"pods":                {Version: "v1", Resource: "pods"},
		"widgets.example.com": {Group: "example.com", Version: "v1", Resource: "widgets"},
		"replicasets.apps":    {Group: "apps", Version: "v1", Resource: "replicasets"},
	}
	var asked []string
	resolved, problems := Resolve("rules.yaml", f, func(name string) (source.Resource, string, error) {
		asked = append(asked, name)
		gvr, ok := served[name]
		switch {
		case name == "widgets.example.com":
			return source.Resource{GVR: gvr}, "not served yet: taken as written", nil
		case !ok:
			return source.Resource{}, "", errors.New("not served")
		}
		return source.Resource{GVR: gvr}, "", nil
	})
	if got, want := slices.Sorted(maps.Keys(resolved)), []string{"pods", "replicasets.apps", "widgets.example.com"}; !slices.Equal(got, want) {
		t.Errorf("resolved %v, want %v", got, want)
	}
	if n := len(slices.DeleteFunc(slices.Clone(asked), func(s string) bool { return s != "replicasets.apps" })); n != 1 {
		t.Errorf("asked %v: replicasets.apps %d times, want an owner resource once", asked, n)
	}
	want := []Problem{
		{Message: "rules.yaml: rules[0].resources[1]: not served yet: taken as written", Warning: true},
		{Message: `rules.yaml: rules[0]: resource "rollouts.argoproj.io", read by fromOwner or fromRef: not served; not granted`, Warning: true},
		{Message: "rules.yaml: rules[1].resources[1]: not served"},
	}
	if !reflect.DeepEqual(problems, want) {
		t.Errorf("problems = %+v, want %+v", problems, want)
	}
}
