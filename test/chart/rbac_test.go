package chart

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The chart's ClusterRole and Roles, in the release's namespace and in
// each namespace rules name literally, grant exactly what `kube-annotator
// rbac` prints for the same rules and options, for every ci/ values file:
// the rules of rules.inline and its tenants section (what any tenant's
// rules may need), and rbac.extraResources as a rule naming them
// that selects by namespace labels (the chart cannot see a ConfigMap's
// rules, so it grants what such a rule needs), whose value reads an owner
// through the resources of rbac.extraReadResources (list and watch on
// each, sorted with the owner resources). With a shard group the
// Role's Lease rules are those of deploy/sharded/group/role.yaml instead of
// the leader Lease's; with static shards there are none.
func TestChartRBACEqualsRBACCommand(t *testing.T) {
	const ns = "kube-annotator"
	for _, c := range ciCases(t, ns) {
		t.Run(c.name, func(t *testing.T) {
			objs := objects(t, c.rendered)
			var gotCR rbacv1.ClusterRole
			into(t, one(t, objs, "ClusterRole"), &gotCR)
			gotRoles := map[string][]rbacv1.PolicyRule{}
			for _, obj := range byKind(objs, "Role") {
				var r rbacv1.Role
				into(t, obj, &r)
				gotRoles[r.Namespace] = r.Rules
			}

			mode := stringValue(c.values, "none", "sharding", "mode")
			args := []string{"rbac", "--rules", rulesFileFor(t, c.values, objs), "-n", ns,
				"--field-manager", stringValue(c.values, "kube-annotator", "fieldManager"),
				"--leader-election-id", stringValue(c.values, "ka-kube-annotator", "leaderElection", "id"),
				"--leader-election=" + boolString(mode == "none")}
			if value(c.values, "events") == true {
				args = append(args, "--events")
			}
			if value(c.values, "admissionPolicies", "enabled") == true {
				args = append(args, "--admission-policies")
			}
			var wantCR rbacv1.ClusterRole
			wantRoles := map[string][]rbacv1.PolicyRule{}
			for _, doc := range Documents(runCLI(t, args...)) {
				var meta struct{ Kind string }
				if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
					t.Fatal(err)
				}
				switch meta.Kind {
				case "ClusterRole":
					unmarshal(t, doc, &wantCR)
				case "Role":
					var r rbacv1.Role
					unmarshal(t, doc, &r)
					wantRoles[r.Namespace] = r.Rules
				}
			}
			if mode == "group" { // after the record's two rules, before the writes in the namespace
				wantRoles[ns] = slices.Insert(wantRoles[ns], 2, rbacv1.PolicyRule{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
					Verbs: []string{"create", "get", "list", "watch", "update", "delete"}})
			}
			if !equality.Semantic.DeepEqual(gotCR.Rules, wantCR.Rules) {
				t.Errorf("ClusterRole rules differ from `%v`:\nchart: %s\nrbac:  %s", args, asYAML(t, gotCR.Rules), asYAML(t, wantCR.Rules))
			}
			if !equality.Semantic.DeepEqual(gotRoles, wantRoles) {
				t.Errorf("Roles' rules, by namespace, differ from `%v`:\nchart: %s\nrbac:  %s", args, asYAML(t, gotRoles), asYAML(t, wantRoles))
			}
			sa := one(t, objs, "ServiceAccount").GetName()
			bindings := append(byKind(objs, "ClusterRoleBinding"), byKind(objs, "RoleBinding")...)
			if len(bindings) != 1+len(gotRoles) {
				t.Errorf("%d bindings, want a ClusterRoleBinding and a RoleBinding beside each of the %d Roles", len(bindings), len(gotRoles))
			}
			for _, obj := range bindings {
				var b rbacv1.RoleBinding
				into(t, obj, &b)
				if len(b.Subjects) != 1 || b.Subjects[0].Name != sa || b.Subjects[0].Namespace != ns {
					t.Errorf("%s %s/%s subjects %+v, want the ServiceAccount %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName(), b.Subjects, ns, sa)
				}
			}
		})
	}
}

// rulesFileFor writes the rules the chart grants for values as a rules
// file: those of the rules ConfigMap it renders (none with
// rules.existingConfigMap) and its tenants section, and a rule for
// rbac.extraResources and rbac.extraReadResources.
func rulesFileFor(t *testing.T, vals map[string]any, objs []*unstructured.Unstructured) string {
	t.Helper()
	file := map[string]any{"version": "v1"}
	var list []any
	for _, cm := range byKind(objs, "ConfigMap") {
		if !strings.HasSuffix(cm.GetName(), "-rules") {
			continue
		}
		data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		for _, d := range data {
			var inline struct {
				Rules   []any
				Tenants any
			}
			if err := yaml.Unmarshal([]byte(d), &inline); err != nil {
				t.Fatal(err)
			}
			list = inline.Rules
			if inline.Tenants != nil {
				file["tenants"] = inline.Tenants
			}
		}
	}
	extra, _ := value(vals, "rbac", "extraResources").([]any)
	read, _ := value(vals, "rbac", "extraReadResources").([]any)
	if len(extra) > 0 {
		annotations := map[string]any{"example.com/granted": "true"}
		if len(read) > 0 {
			annotations["example.com/read"] = map[string]any{"fromOwner": map[string]any{"annotation": "example.com/read", "through": read}}
		}
		list = append(list, map[string]any{"name": "extra-resources", "resources": extra,
			"namespaceSelector": "granted=true", "annotations": annotations})
	} else if len(read) > 0 {
		t.Fatal("rbac.extraReadResources is modelled as read by the rule of rbac.extraResources: give both")
	}
	file["rules"] = list
	data, err := yaml.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// stringValue is the string at path in vals, or def where it is unset or
// empty (the chart's default).
func stringValue(vals map[string]any, def string, path ...string) string {
	if s, _ := value(vals, path...).(string); s != "" {
		return s
	}
	return def
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// unmarshal decodes a YAML document into out.
func unmarshal(t *testing.T, doc string, out any) {
	t.Helper()
	if err := yaml.Unmarshal([]byte(doc), out); err != nil {
		t.Fatal(err)
	}
}

// asYAML prints v for a failure message.
func asYAML(t *testing.T, v any) string {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return "\n" + string(data)
}
