package chart

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/kube"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// For every ci/ values file, the chart's key locks are the
// ValidatingAdmissionPolicies and bindings `kube-annotator admission`
// prints for the rules of rules.inline, each rule's locked rewritten as
// the chart reads it: the release's ServiceAccount first among its users,
// and, for locked: true, the default groups. Names are compared from
// ".lock.", as the chart names them after the release and admission after
// the field manager; of the labels, the rule's.
func TestKeyLocksEqualAdmissionCommand(t *testing.T) {
	const ns = "kube-annotator"
	locks := 0
	for _, c := range ciCases(t, ns) {
		t.Run(c.name, func(t *testing.T) {
			sa := "system:serviceaccount:" + ns + ":" + stringValue(c.values, "ka-kube-annotator", "serviceAccount", "name")
			got := keyLocks(t, objects(t, c.rendered))
			path, ok := lockedRulesFile(t, objects(t, c.rendered), sa)
			if !ok {
				if len(got) != 0 {
					t.Errorf("no inline rule is locked, yet the chart renders %d key lock objects", len(got))
				}
				return
			}
			out := runCLI(t, "admission", "--rules", path, "--field-manager", stringValue(c.values, "kube-annotator", "fieldManager"))
			want := keyLocks(t, objects(t, out))
			if len(want) == 0 {
				t.Fatal("admission prints no key lock for rules marked locked")
			}
			locks += len(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("the chart's key locks differ from admission's:\nchart: %s\nadmission: %s", asYAML(t, got), asYAML(t, want))
			}
		})
	}
	if locks == 0 {
		t.Error("no ci/ values file locks a rule")
	}
}

// keyLocks returns the ValidatingAdmissionPolicies and bindings among objs
// that lock a rule's keys (labelled kube-annotator.io/rule), the
// policies first, each as its kind, name from ".lock.", rule label and
// spec, with the policy's name in a binding's spec likewise.
func keyLocks(t *testing.T, objs []*unstructured.Unstructured) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, o := range objs {
		rule, ok := o.GetLabels()["kube-annotator.io/rule"]
		if !ok || (o.GetKind() != "ValidatingAdmissionPolicy" && o.GetKind() != "ValidatingAdmissionPolicyBinding") {
			continue
		}
		spec, _, _ := unstructured.NestedMap(o.Object, "spec")
		if p, ok := spec["policyName"].(string); ok {
			spec["policyName"] = fromLock(t, p)
		}
		out = append(out, map[string]any{"kind": o.GetKind(), "name": fromLock(t, o.GetName()), "rule": rule, "spec": spec})
	}
	// Helm installs by kind: the policies, in rule order, then the bindings.
	slices.SortStableFunc(out, func(a, b map[string]any) int { return strings.Compare(a["kind"].(string), b["kind"].(string)) })
	return out
}

// fromLock is name from ".lock.".
func fromLock(t *testing.T, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(name, ".lock.")
	if !ok {
		t.Errorf("key lock %q: not named <prefix>.lock.<rule>", name)
	}
	return ".lock." + rest
}

// lockedRulesFile writes the rules of the rules ConfigMap among objs as a
// rules file, each locked rule allowing sa first, and reports whether one
// is locked.
func lockedRulesFile(t *testing.T, objs []*unstructured.Unstructured, sa string) (string, bool) {
	t.Helper()
	var file map[string]any
	for _, cm := range byKind(objs, "ConfigMap") {
		if !strings.HasSuffix(cm.GetName(), "-rules") {
			continue
		}
		data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		for _, d := range data {
			unmarshal(t, d, &file)
		}
	}
	rules, _ := file["rules"].([]any)
	locked := false
	for _, r := range rules {
		rule := r.(map[string]any)
		switch l := rule["locked"].(type) {
		case bool:
			if l {
				rule["locked"] = map[string]any{"users": []any{sa}, "groups": []any{"system:masters", "kubeadm:cluster-admins"}}
				locked = true
			}
		case map[string]any:
			users, _ := l["users"].([]any)
			l["users"] = append([]any{sa}, slices.DeleteFunc(users, func(u any) bool { return u == sa })...)
			locked = true
		}
	}
	if !locked {
		return "", false
	}
	data, err := yaml.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, true
}

// Installed, a locked rule's policy refuses a user with every RBAC right
// who is in no group the rule allows setting the rule's key, and lets a
// member of the group and the release's ServiceAccount, which writes the
// key, set it; uninstalled, it is gone.
func TestKeyLock(t *testing.T) {
	ns, objNS := env.NewNamespace(t), env.NewNamespace(t)
	env.Create(t, h.Deployments, objNS, h.Deployment(t, objNS, "web", 1))
	group := "owners-" + ns
	cfg := helmConfig(t, ns)
	ch, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = "keylock", ns
	install.WaitStrategy, install.Timeout = kube.HookOnlyStrategy, time.Minute
	install.ServerSideApply = true
	vals := map[string]any{"optOutLock": map[string]any{"enabled": false}, "rules": map[string]any{"inline": map[string]any{
		"version": "v1", "rules": []any{map[string]any{"name": "owner", "resources": []any{"deployments"}, "namespaces": []any{objNS},
			"locked": map[string]any{"groups": []any{group}}, "annotations": map[string]any{"example.com/owner": "platform"}}}}}}
	if _, err := install.RunWithContext(t.Context(), ch, vals); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	user := "keylock-" + ns
	env.GrantClusterAdmin(t, user)
	set := func(as rest.ImpersonationConfig, value string) error {
		return annotateAs(t, as, objNS, "example.com/owner", value)
	}
	// The policy takes a moment to be in force: retry until it refuses.
	const denial = "rule owner locks annotation example.com/owner"
	refusal := waitRefusal(t, denial, func(i int) error { return set(rest.ImpersonationConfig{UserName: user}, fmt.Sprint("mine-", i)) })
	if refusal == nil || !strings.Contains(refusal.Error(), denial) || !strings.Contains(refusal.Error(), "system:serviceaccount:"+ns+":keylock-kube-annotator") {
		t.Fatalf("%s, in no allowed group, setting the locked key: %v, want a refusal naming the rule and the release's ServiceAccount", user, refusal)
	}
	// Each changes the value set before.
	for _, c := range []struct {
		as    rest.ImpersonationConfig
		value string
	}{
		{rest.ImpersonationConfig{UserName: user, Groups: []string{group}}, "by-group"},
		{rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":keylock-kube-annotator"}, "platform"},
	} {
		if err := set(c.as, c.value); err != nil {
			t.Errorf("%+v setting the locked key to %s: %v", c.as, c.value, err)
		}
	}

	uninstall := action.NewUninstall(cfg)
	uninstall.WaitStrategy, uninstall.Timeout = kube.HookOnlyStrategy, time.Minute
	if _, err := uninstall.Run("keylock"); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return set(rest.ImpersonationConfig{UserName: user}, "after uninstall") == nil, nil
	})
	if err != nil {
		t.Errorf("after helm uninstall, %s still may not set the locked key", user)
	}
}
