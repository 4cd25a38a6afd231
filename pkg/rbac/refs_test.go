package rbac

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// The objects fromRef reads are listed and watched: every claim, and
// only the ConfigMaps of the names the rules give, by resourceNames; a
// ruled resource is watched already.
func TestGenerateFromRef(t *testing.T) {
	withClaims := maps.Clone(resolved)
	withClaims["persistentvolumeclaims"] = source.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, Kind: "PersistentVolumeClaim", Namespaced: true}
	withClaims["configmaps"] = source.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}
	ref := func(res, field, name string, names ...string) rulefile.RelatedKey {
		r := &rulefile.Refs{Resource: res, Name: name, Names: names}
		if field != "" {
			r.Field = []string{"spec", field}
		}
		return rulefile.RelatedKey{Source: source.Ref, Kind: "label", Key: "team", Refs: r}
	}
	reads := map[string]rulefile.RelatedKey{
		"team":  ref("persistentvolumeclaims", "claimRef", ""),
		"owner": ref("configmaps", "", "defaults"),
		"cost":  ref("configmaps", "settings", "", "team-b", "team-a"),
	}
	admission := []rbacv1.PolicyRule{rule("admissionregistration.k8s.io", admissionResources, admissionVerbs...),
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}, ResourceNames: []string{"defaults"}}}
	for _, tc := range []struct {
		name      string
		rules     []rulefile.Rule
		admission bool
		want      []rbacv1.PolicyRule
	}{
		{name: "claims, and ConfigMaps by name", rules: []rulefile.Rule{{Resources: []string{"pods"}, Labels: rulefile.Metadata{FromRelated: reads}}},
			want: []rbacv1.PolicyRule{rule("", []string{"pods"}, allVerbs...), nsWatch, rule("", []string{"persistentvolumeclaims"}, watchVerbs...),
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: watchVerbs, ResourceNames: []string{"defaults", "team-a", "team-b"}}}},
		{name: "ruled ConfigMaps are watched already", rules: []rulefile.Rule{{Resources: []string{"configmaps"}, Labels: rulefile.Metadata{FromRelated: map[string]rulefile.RelatedKey{"owner": reads["owner"]}}}},
			want: []rbacv1.PolicyRule{rule("", []string{"configmaps"}, allVerbs...), nsWatch}},
		// A policy that reads a ConfigMap named by name as its params is
		// bound only by who may get it, in every namespace.
		{name: "admission policies: ConfigMaps named by name, got", admission: true,
			rules: []rulefile.Rule{{Resources: []string{"pods"}, Labels: rulefile.Metadata{FromRelated: reads}}},
			want: append([]rbacv1.PolicyRule{rule("", []string{"pods"}, allVerbs...), nsWatch, rule("", []string{"persistentvolumeclaims"}, watchVerbs...),
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: watchVerbs, ResourceNames: []string{"defaults", "team-a", "team-b"}}}, admission...)},
		{name: "admission policies: ruled ConfigMaps named by name, got cluster-wide", admission: true,
			rules: []rulefile.Rule{{Resources: []string{"configmaps"}, Namespaces: []string{"team-a"}, Labels: rulefile.Metadata{FromRelated: map[string]rulefile.RelatedKey{"owner": reads["owner"]}}}},
			want:  append([]rbacv1.PolicyRule{rule("", []string{"configmaps"}, watchVerbs...), nsWatch}, admission...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := YAML(Generate(&rulefile.File{Rules: tc.rules}, withClaims, Options{Name: "ka", Namespace: "sys", Admission: tc.admission}))
			if err != nil {
				t.Fatal(err)
			}
			var objs []object
			for _, doc := range strings.Split(out, "---\n") {
				var obj object
				if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
					t.Fatal(err)
				}
				objs = append(objs, obj)
			}
			if got := rulesOf(t, objs, "ClusterRole", ""); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ClusterRole rules:\n%v\nwant:\n%v", got, tc.want)
			}
		})
	}
}
