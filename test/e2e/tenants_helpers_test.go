package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// tenantConfigMap is the ConfigMap the tenants section of the tests names.
const tenantConfigMap = "kube-annotator-rules"

// tenantStatus is the annotation the controller writes on a tenant's
// ConfigMap (tenants.StatusAnnotation).
const tenantStatus = "kube-annotator.io/tenant-status"

// tenantAFile is a tenant's rules file of three rules: team on its Pods,
// myorg.net/foo on its Namespace, and evil.example/bypass, which a
// tenants section allowing myorg.net/* and team refuses at line 10.
const tenantAFile = `rules:
- name: team
  resources: [pods]
  labels: {team: a}
- name: foo
  resources: [namespaces]
  labels: {myorg.net/foo: "yes"}
- name: evil
  resources: [namespaces]
  labels: {evil.example/bypass: "1"}
`

// eventsGVR is the events.k8s.io Events resource.
var eventsGVR = schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}

// tenantUser grants user what a real cluster grants a tenant in its
// namespace: its ConfigMaps and Pods, and its own Namespace's labels
// (patch on that one Namespace alone), nothing cluster-wide.
func tenantUser(t *testing.T, ns, user string) {
	t.Helper()
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps", "pods"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
	}
	binding := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: "tenant", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tenant"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	nsRole := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: "tenant-ns-" + ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: []string{ns},
			Verbs: []string{"get", "patch", "update"}}},
	}
	nsBinding := &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: "tenant-ns-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "tenant-ns-" + ns},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	var docs []string
	for _, o := range []any{role, binding, nsRole, nsBinding} {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	manifests := strings.Join(docs, "---\n")
	if out, err := kubectl(t, manifests, "apply", "-f", "-"); err != nil {
		t.Fatalf("grant %s its namespace: %v\n%s", user, err, out)
	}
	t.Cleanup(func() { _, _ = kubectl(t, manifests, "delete", "--ignore-not-found", "-f", "-") })
}

// putTenantRules has user write its rules file into its ConfigMap.
func putTenantRules(t *testing.T, ns, user, rules string) {
	t.Helper()
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": tenantConfigMap, "namespace": ns},
		"data": map[string]string{"rules.yaml": rules}}
	b, err := yaml.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := kubectl(t, string(b), "--as", user, "apply", "--server-side", "--field-manager", user, "-f", "-"); err != nil {
		t.Fatalf("%s writing its rules: %v\n%s", user, err, out)
	}
}

// waitTenantStatus waits until the status on ns's rules ConfigMap holds
// every one of want, and returns it.
func waitTenantStatus(t *testing.T, ns string, want ...string) string {
	t.Helper()
	var status string
	waitFor(t, 30*time.Second, fmt.Sprintf("the status of %s/%s to say %q", ns, tenantConfigMap, want), func() bool {
		status = env.Get(t, h.ConfigMaps, ns, tenantConfigMap).GetAnnotations()[tenantStatus]
		for _, w := range want {
			if !strings.Contains(status, w) {
				return false
			}
		}
		return true
	})
	return status
}

// refusalEvents counts the Warning Events about ns's rules ConfigMap
// that say something of its file is refused.
func refusalEvents(t *testing.T, ns string) int {
	t.Helper()
	return tenantEvents(t, ns, "TenantRulesRefused")
}

// runAsRBAC applies what `rbac` grants for the rules file to a
// ServiceAccount of saNS named name, until the test ends, and returns its
// user name, for run --as.
func runAsRBAC(t *testing.T, rulesFile, saNS, name string) string {
	t.Helper()
	manifests, stderr, code := runCLI(t, "rbac", "--rules", rulesFile, "-n", saNS, "--name", name, "--field-manager", name, "--kubeconfig", env.Kubeconfig)
	if code != 0 {
		t.Fatalf("rbac: exit %d: %s", code, stderr)
	}
	if out, err := kubectl(t, manifests, "apply", "-f", "-"); err != nil {
		t.Fatalf("apply rbac: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = kubectl(t, manifests, "delete", "-f", "-") })
	return "system:serviceaccount:" + saNS + ":" + name
}
