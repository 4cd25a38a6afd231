package chart

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/kube"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// The chart's opt-out lock is deploy/optout-lock.yaml's policy: rendered
// with the defaults as release kube-annotator in namespace kube-annotator,
// the two are the same objects; each ci/ values file gets the lock unless
// it turns it off, with its allowed groups and users and the release's
// ServiceAccount.
func TestOptOutLockMatchesDeploy(t *testing.T) {
	ch, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := Render(ch, map[string]any{}, "kube-annotator", "kube-annotator", kubeVersion())
	if err != nil {
		t.Fatal(err)
	}
	deployed, err := os.ReadFile(filepath.Join(h.RepoRoot(), "deploy", "optout-lock.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := lockObjects(t, objects(t, string(deployed)))
	got := lockObjects(t, objects(t, rendered))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the chart's opt-out lock differs from deploy/optout-lock.yaml:\n%s\nwant:\n%s", asYAML(t, got), asYAML(t, want))
	}

	for _, c := range ciCases(t, "kube-annotator") {
		t.Run(c.name, func(t *testing.T) {
			locks := lockObjects(t, objects(t, c.rendered))
			if value(c.values, "optOutLock", "enabled") == false {
				if len(locks) != 0 {
					t.Errorf("optOutLock.enabled is false, but the chart renders %d lock objects", len(locks))
				}
				return
			}
			if len(locks) != 2 {
				t.Fatalf("%d lock objects, want a policy and its binding", len(locks))
			}
			groups := value(c.values, "optOutLock", "allowedGroups")
			if groups == nil {
				groups = []any{"system:masters", "kubeadm:cluster-admins"}
			}
			users := []any{"system:serviceaccount:kube-annotator:" + stringValue(c.values, "ka-kube-annotator", "serviceAccount", "name")}
			if more, ok := value(c.values, "optOutLock", "allowedUsers").([]any); ok {
				users = append(users, more...)
			}
			vars := locks[0]["spec"].(map[string]any)["variables"]
			if w := []any{map[string]any{"name": "allowedUsers", "expression": users}, map[string]any{"name": "allowedGroups", "expression": groups}}; !reflect.DeepEqual(vars, w) {
				t.Errorf("variables %v, want %v", vars, w)
			}
		})
	}
}

// lockObjects returns the ValidatingAdmissionPolicies and their bindings
// among objs but the rules' key locks, without metadata but their names' suffix, with the lists the
// variables' CEL expressions hold decoded, so that formatting and labels
// do not count.
func lockObjects(t *testing.T, objs []*unstructured.Unstructured) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, o := range objs {
		if o.GetKind() != "ValidatingAdmissionPolicy" && o.GetKind() != "ValidatingAdmissionPolicyBinding" {
			continue
		}
		if _, ok := o.GetLabels()["kube-annotator.io/rule"]; ok {
			continue // a rule's key lock (TestKeyLocksEqualAdmissionCommand)
		}
		spec, _, _ := unstructured.NestedMap(o.Object, "spec")
		vars, _, _ := unstructured.NestedSlice(spec, "variables")
		for _, v := range vars {
			m := v.(map[string]any)
			var list []any
			if err := json.Unmarshal([]byte(m["expression"].(string)), &list); err != nil {
				t.Fatalf("%s %s: variable %s: not a list literal: %v", o.GetKind(), o.GetName(), m["name"], err)
			}
			m["expression"] = list
		}
		if vars != nil {
			spec["variables"] = vars
		}
		if p, ok := spec["policyName"].(string); ok {
			spec["policyName"] = strings.TrimPrefix(p, "kube-annotator")
		}
		out = append(out, map[string]any{"kind": o.GetKind(), "name": strings.TrimPrefix(o.GetName(), "kube-annotator"), "spec": spec})
	}
	return out
}

// Installed, the lock refuses a user with every RBAC right who is in no
// allowed group the opt-out annotation, and lets a member of an allowed
// group and the release's ServiceAccount set it; uninstalled, it is gone.
func TestOptOutLock(t *testing.T) {
	ns, objNS := env.NewNamespace(t), env.NewNamespace(t)
	env.Create(t, h.Deployments, objNS, h.Deployment(t, objNS, "web", 1))
	group := "lock-admins-" + ns
	cfg := helmConfig(t, ns)
	ch, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = "lock", ns
	install.WaitStrategy, install.Timeout = kube.HookOnlyStrategy, time.Minute
	install.ServerSideApply = true
	if _, err := install.RunWithContext(t.Context(), ch, map[string]any{"optOutLock": map[string]any{"allowedGroups": []any{group}}}); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	user := "optout-" + ns
	env.GrantClusterAdmin(t, user)
	optOut := func(as rest.ImpersonationConfig, value string) error {
		return annotateAs(t, as, objNS, "kube-annotator.io/ignore", value)
	}
	// The policy takes a moment to be in force, and the lock of a release
	// another test uninstalled a moment ago may still be: retry until this
	// release's lock refuses, and until each allowed identity is let
	// through.
	const policy = "'lock-kube-annotator-optout-lock'"
	refusal := waitRefusal(t, policy, func(i int) error { return optOut(rest.ImpersonationConfig{UserName: user}, fmt.Sprint(i%2 == 0)) })
	if refusal == nil || !strings.Contains(refusal.Error(), policy) ||
		!strings.Contains(refusal.Error(), "may set, change or remove the annotation kube-annotator.io/ignore") {
		t.Fatalf("%s, in no allowed group, setting the opt-out annotation: %v, want a refusal by the policy %s", user, refusal, policy)
	}
	for _, as := range []rest.ImpersonationConfig{
		{UserName: user, Groups: []string{group}},
		{UserName: "system:serviceaccount:" + ns + ":lock-kube-annotator"},
	} {
		var err error
		_ = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			err = optOut(as, "as "+as.UserName+strings.Join(as.Groups, ","))
			return err == nil, nil
		})
		if err != nil {
			t.Errorf("%+v setting the opt-out annotation, for 30s: %v", as, err)
		}
	}

	uninstall := action.NewUninstall(cfg)
	uninstall.WaitStrategy, uninstall.Timeout = kube.HookOnlyStrategy, time.Minute
	if _, err := uninstall.Run("lock"); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return optOut(rest.ImpersonationConfig{UserName: user}, "after uninstall") == nil, nil
	})
	if err != nil {
		t.Errorf("after helm uninstall, %s still may not set the opt-out annotation", user)
	}
}

// annotateAs sets the annotation key of the Deployment web in namespace to
// value, as the identity as, and returns the API server's answer.
func annotateAs(t *testing.T, as rest.ImpersonationConfig, namespace, key, value string) error {
	t.Helper()
	c := rest.CopyConfig(env.Config)
	c.Impersonate = as
	dc, err := dynamic.NewForConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, value)
	_, err = dc.Resource(h.Deployments).Namespace(namespace).Patch(t.Context(), "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// waitRefusal calls try, with 0, 1, 2 and on, until it returns an error
// holding want, for at most 30 s, and returns its last error: a policy
// takes a moment to be in force.
func waitRefusal(t *testing.T, want string, try func(i int) error) error {
	t.Helper()
	var refusal error
	i := 0
	_ = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		refusal = try(i)
		i++
		return refusal != nil && strings.Contains(refusal.Error(), want), nil
	})
	return refusal
}
