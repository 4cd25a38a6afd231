package tenantfile

import (
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
	"github.com/kube-annotator/kube-annotator/pkg/rules/yamlfield"
)

func decode(t *testing.T, src string) (*spec.Tenants, []string) {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		t.Fatal(err)
	}
	d := &yamlfield.Decoder{}
	got := Decode(d, root.Content[0], "tenants")
	var errs []string
	for _, e := range d.Errs {
		errs = append(errs, e.Field+": "+e.Message)
	}
	return got, errs
}

func TestDecodeDefaults(t *testing.T) {
	got, errs := decode(t, `{resources: [pods, namespaces], keys: {labels: ["myorg.net/*", team]}}`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := &spec.Tenants{ConfigMap: spec.DefaultTenantConfigMap, Key: spec.DefaultTenantKey, Resources: []string{"pods", "namespaces"},
		Labels: []string{"myorg.net/*", "team"}, MaxRules: spec.DefaultTenantMaxRules, MaxKeys: spec.DefaultTenantMaxKeys,
		MaxValueBytes: spec.DefaultTenantMaxValueBytes, ValueForms: spec.DefaultTenantValueForms, WritesPerSecond: spec.DefaultTenantWritesPerSecond}
	if !got.Equal(want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestDecodeGiven(t *testing.T) {
	got, errs := decode(t, `{configMapSelector: "kube-annotator.io/rules=tenant", key: tenant.yaml, namespaceSelector: "capsule.clastix.io/tenant",
  resources: [pods], keys: {annotations: ["*"]}, maxRules: 5, maxKeys: 7, maxValueBytes: 64, valueForms: [value, cel],
  writesPerSecond: 3, maxChanges: 500}`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got.ConfigMap != "" || got.ConfigMapSelector != "kube-annotator.io/rules=tenant" || got.Key != "tenant.yaml" || got.MaxRules != 5 ||
		got.MaxKeys != 7 || got.MaxValueBytes != 64 || !slices.Equal(got.ValueForms, []string{"value", "cel"}) || got.Labels != nil || got.WritesPerSecond != 3 || got.MaxChanges != 500 {
		t.Errorf("got %+v", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"not a mapping", `[pods]`, "tenants: must be a mapping"},
		{"resources missing", `{keys: {labels: [team]}}`, `tenants: missing required field "resources"`},
		{"keys missing", `{resources: [pods]}`, `tenants: missing required field "keys"`},
		{"no key glob", `{resources: [pods], keys: {}}`, "tenants.keys: must allow at least one label or annotation key glob"},
		{"bad key glob", `{resources: [pods], keys: {labels: ["team["]}}`, `tenants.keys.labels[0]: invalid key glob "team["`},
		{"secrets", `{resources: [pods, secrets], keys: {labels: [team]}}`, "tenants.resources[1]: tenant rules may never write Secrets"},
		{"secret v1", `{resources: [secret.v1], keys: {labels: [team]}}`, "tenants.resources[0]: tenant rules may never write Secrets"},
		{"duplicate resource", `{resources: [pods, pods], keys: {labels: [team]}}`, `tenants.resources[1]: duplicate resource "pods"`},
		{"both ConfigMap fields", `{configMap: a, configMapSelector: b=c, resources: [pods], keys: {labels: [team]}}`, "tenants.configMapSelector: give configMap or configMapSelector, not both"},
		{"bad ConfigMap name", `{configMap: A_B, resources: [pods], keys: {labels: [team]}}`, `tenants.configMap: invalid ConfigMap name "A_B"`},
		{"bad selector", `{namespaceSelector: "a b c", resources: [pods], keys: {labels: [team]}}`, `tenants.namespaceSelector: invalid label selector`},
		{"zero rules", `{maxRules: 0, resources: [pods], keys: {labels: [team]}}`, "tenants.maxRules: must be a whole number from 1 to 3500"},
		{"too many keys", `{maxKeys: 1001, resources: [pods], keys: {labels: [team]}}`, "tenants.maxKeys: must be a whole number from 1 to 1000"},
		{"string bound", `{maxValueBytes: "64", resources: [pods], keys: {labels: [team]}}`, "tenants.maxValueBytes: must be a whole number"},
		{"zero writes", `{writesPerSecond: 0, resources: [pods], keys: {labels: [team]}}`, "tenants.writesPerSecond: must be a whole number from 1 to 10000"},
		{"fractional writes", `{writesPerSecond: 0.5, resources: [pods], keys: {labels: [team]}}`, "tenants.writesPerSecond: must be a whole number from 1 to 10000"},
		{"negative changes", `{maxChanges: -1, resources: [pods], keys: {labels: [team]}}`, "tenants.maxChanges: must be a whole number from 1 to 10000000"},
		{"unknown form", `{valueForms: [fromOwnr], resources: [pods], keys: {labels: [team]}}`, `tenants.valueForms[0]: unknown value form "fromOwnr" (did you mean "fromOwner"?)`},
		{"unknown field", `{resource: [pods], resources: [pods], keys: {labels: [team]}}`, `tenants.resource: unknown field (did you mean "resources"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := decode(t, tc.src)
			if !slices.ContainsFunc(errs, func(e string) bool { return strings.HasPrefix(e, tc.want) }) {
				t.Errorf("errors %q, want one starting %q", errs, tc.want)
			}
		})
	}
}
