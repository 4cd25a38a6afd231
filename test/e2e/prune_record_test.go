package e2e

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// resourceVersions returns the resourceVersions of the seedPrune objects
// and of the record in ns.
func resourceVersions(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range []pruned{web, webPod, settings, {h.ConfigMaps, "kube-annotator-resources"}} {
		out[o.gvr.Resource+"/"+o.name] = env.Get(t, o.gvr, ns, o.name).GetResourceVersion()
	}
	return out
}

// After a resource leaves the rules, diff lists the removals and writes
// nothing, not even the record; once then prunes, and updates the record.
func TestPruneDiffAndOnce(t *testing.T) {
	ns := seedPrune(t)
	before := othersKeys(t, ns)
	rulesFile := writeFile(t, "rules.yaml", workloadsRules)
	base := []string{"--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns, "--record-namespace", ns}
	if _, stderr, code := runCLI(t, append([]string{"once"}, base...)...); code != 0 {
		t.Fatalf("once: exit %d: %s", code, stderr)
	}
	waitRecord(t, time.Second, ns, "kube-annotator", "deployments.apps@"+ns, "pods@"+ns)
	replaceFile(t, rulesFile, podsRules)

	t.Run("diff lists the removals and writes nothing", func(t *testing.T) {
		rvs := resourceVersions(t, ns)
		stdout, stderr, code := runCLIReadOnly(t, append([]string{"diff"}, base...)...)
		want := "deployments.v1.apps " + ns + "/web\n" + `  sample-controller: "True" → <none>` + "\n"
		if code != 1 || stdout != want {
			t.Errorf("diff: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 1 and:\n%s", code, stdout, stderr, want)
		}
		if got := resourceVersions(t, ns); !maps.Equal(got, rvs) {
			t.Errorf("resourceVersions changed across diff: %v, were %v", got, rvs)
		}
	})

	t.Run("once prunes and updates the record", func(t *testing.T) {
		stdout, stderr, code := runCLI(t, append([]string{"once"}, base...)...)
		if code != 0 || !hasRow(stdout, []string{"deployments.v1.apps", "1", "1", "0", "no", "rule", "names", "it:", "pruned"}) {
			t.Errorf("once: exit %d, stdout:\n%s\nstderr:\n%s\nwant 0 and the deployment pruned", code, stdout, stderr)
		}
		if carriesKey(t, ns, web, "sample-controller") || !carriesKey(t, ns, webPod, "sample-controller") {
			t.Errorf("after once: the Deployment still has the key, or the Pod lost it")
		}
		waitRecord(t, time.Second, ns, "kube-annotator", "pods@"+ns)
		stdout, _, code = runCLI(t, append([]string{"diff"}, base...)...)
		if code != 0 || stdout != "" {
			t.Errorf("diff after once: exit %d, stdout %q; want 0 and nothing", code, stdout)
		}
	})

	t.Run("keys of others are byte-identical", func(t *testing.T) { checkOthersKept(t, ns, before) })
}

// The record lists a resource before the first write to it: the API
// server stored the record's version that lists deployments before the
// Deployment's version that carries the key.
func TestPruneRecordedBeforeFirstWrite(t *testing.T) {
	ns := seedPrune(t)
	ctx := t.Context()
	recordWatch, err := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", "kube-annotator-resources").String()})
	if err != nil {
		t.Fatal(err)
	}
	defer recordWatch.Stop()
	rulesFile := writeFile(t, "rules.yaml", "rules:\n- name: apps\n  resources: [deployments]\n  annotations: {sample-controller: \"True\"}\n")
	seeded := env.Get(t, h.Deployments, ns, web.name).GetResourceVersion()
	startRun(t, "--rules", rulesFile, "-n", ns, "--record-namespace", ns)
	waitKey(t, 15*time.Second, ns, web, "sample-controller", true)

	written := firstVersionWith(t, h.Deployments, ns, web.name, seeded, func(u *unstructured.Unstructured) bool {
		_, ok := u.GetAnnotations()["sample-controller"]
		return ok
	})
	recorded := int64(-1)
	for recorded < 0 {
		select {
		case ev, open := <-recordWatch.ResultChan():
			if !open || ev.Type == watch.Error {
				t.Fatalf("the watch of the record ended: %v", ev.Object)
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if ok && ev.Type != watch.Deleted && strings.Contains(u.Object["data"].(map[string]any)["resources"].(string), "deployments.apps -n "+ns) {
				recorded = rv(t, u)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no version of the record lists deployments.apps -n %s", ns)
		}
	}
	if recorded >= written {
		t.Errorf("the record listed deployments at resourceVersion %d, after the Deployment was written at %d", recorded, written)
	}
}

// firstVersionWith returns the resourceVersion of the first version of an
// object after version from, as its watch from there replays them, for
// which has holds. A watch from the start of history (resourceVersion 1)
// would outlast the API server's watch cache, which keeps only the last
// events of a resource, and its compaction of etcd: from is the version
// the test last read, seconds before.
func firstVersionWith(t *testing.T, gvr schema.GroupVersionResource, ns, name, from string, has func(*unstructured.Unstructured) bool) int64 {
	t.Helper()
	w, err := env.Dynamic.Resource(gvr).Namespace(ns).Watch(t.Context(), metav1.ListOptions{ResourceVersion: from,
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for {
		select {
		case ev, open := <-w.ResultChan():
			if !open || ev.Type == watch.Error {
				t.Fatalf("the watch of %s %s/%s from its first version ended: %v", gvr.Resource, ns, name, ev.Object)
			}
			if u, ok := ev.Object.(*unstructured.Unstructured); ok && has(u) {
				return rv(t, u)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no version of %s %s/%s as wanted", gvr.Resource, ns, name)
		}
	}
}

// rv is u's resourceVersion as a number: the etcd revision that stored it.
func rv(t *testing.T, u *unstructured.Unstructured) int64 {
	t.Helper()
	n, err := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A recorded resource whose CRD was deleted while its prune was pending
// is reported and kept in the record; removing it from the record, as a
// user would, ends the wait.
func TestPruneCRDDeletedWhilePending(t *testing.T) {
	ns := seedPrune(t)
	crd, frigates := h.FrigateCRDInGroup(t, "prune.example.com")
	env.InstallCRD(t, crd)
	env.CreateWhenServed(t, frigates, ns, "apiVersion: prune.example.com/v1beta1\nkind: Frigate\nmetadata: {name: f1}\nspec: {foo: bar}\n")
	rulesFile := writeFile(t, "rules.yaml", strings.Replace(configMapsRules, "[configmaps]", "[configmaps, frigates.prune.example.com]", 1))
	args := []string{"--rules", rulesFile, "-n", ns, "--record-namespace", ns}
	p := startRun(t, args...)
	env.WaitForAnnotation(t, 15*time.Second, frigates, ns, "f1", "sample-controller", "True")
	waitKey(t, 5*time.Second, ns, settings, "sample-controller", true)
	p.Terminate(t)

	replaceFile(t, rulesFile, configMapsRules)
	env.DeleteCRD(t, "frigates.prune.example.com")
	p = startRun(t, args...)
	const resource = "frigates.prune.example.com"
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
		body, err := p.ReadMetrics()
		return err == nil && promtext.MetricValue(body, "kube_annotator_prune_pending", map[string]string{"resource": resource, "reason": "NotServed"}) == 1, nil
	})
	if err != nil {
		t.Fatalf("kube_annotator_prune_pending{resource=%s,reason=NotServed} not 1 within 15s:\n%s", resource, p.Output(t))
	}
	waitLog(t, p, 5*time.Second, "Cannot prune a resource no rule names; it stays in the record", resource, 1)
	// Past a retry, which reads the record and looks the resource up again:
	// the record's ConfigMap read, nothing else here reads one.
	retried := requests(t)
	waitFor(t, 20*time.Second, "a retry: the record read again", func() bool {
		return requests(t).Sub(retried).Count("GET", "configmaps") > 0
	})
	waitRecord(t, time.Second, ns, "kube-annotator", "configmaps@"+ns, resource+"@"+ns)
	if got := prunePending(t, p, resource, "NotServed"); got != 1 {
		t.Errorf("prune_pending{%s,NotServed} = %v after a retry, want 1", resource, got)
	}
	if code := p.Ready(t); code != 200 {
		t.Errorf("/readyz = %d while a prune waits, want 200", code)
	}

	t.Run("removing it from the record ends the wait", func(t *testing.T) {
		cm := env.Get(t, h.ConfigMaps, ns, "kube-annotator-resources")
		cm.Object["data"].(map[string]any)["resources"] = "configmaps -n " + ns + "\n"
		if _, err := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
			return prunePending(t, p, resource, "NotServed") == 0, nil
		})
		if err != nil {
			t.Errorf("prune_pending{%s,NotServed} still 1 15s after the line was removed", resource)
		}
		waitLog(t, p, time.Second, "Resource removed from the record; it is not pruned", resource, 1)
	})
}

// The sharding components replace the leader Lease's rules in the Role and
// keep the record's ConfigMap: every shard records what it writes.
func TestDeployShardedKeepsTheRecord(t *testing.T) {
	record := []string{"configmaps create ", "configmaps get,update kube-annotator-resources"}
	for component, want := range map[string][]string{
		"sharded":       record,
		"sharded/group": append(record, "leases create,get,list,watch,update,delete "),
	} {
		t.Run(component, func(t *testing.T) {
			var role struct {
				Rules []struct{ Resources, Verbs, ResourceNames []string }
			}
			for _, doc := range strings.Split(renderWithComponent(t, component), "\n---\n") {
				if strings.Contains(doc, "\nkind: Role\n") || strings.HasPrefix(doc, "kind: Role\n") {
					if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
						t.Fatal(err)
					}
				}
			}
			var got []string
			for _, r := range role.Rules {
				got = append(got, strings.Join(r.Resources, ",")+" "+strings.Join(r.Verbs, ",")+" "+strings.Join(r.ResourceNames, ","))
			}
			if !slices.Equal(got, want) {
				t.Errorf("Role rules = %q, want %q", got, want)
			}
		})
	}
}

// A recorded resource that RBAC no longer lets the controller patch is
// reported and kept in the record; its keys stay until it may. (Its prune
// also needs the namespaces, as every sync of a namespaced resource does.)
func TestPruneForbiddenIsKept(t *testing.T) {
	ns := seedPrune(t)
	rulesFile, args := annotatedThenStopped(t, ns)

	// A user who may read deployments but no longer patch them.
	const user = "e2e-prune-restricted"
	roles := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	roleBindings := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
	env.Create(t, roles, ns, h.FromYAML(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: restricted}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get, list, watch, patch]}
- {apiGroups: [apps], resources: [deployments], verbs: [get, list, watch]}
- {apiGroups: [""], resources: [configmaps], verbs: [create]}
- {apiGroups: [""], resources: [configmaps], verbs: [get, update], resourceNames: [kube-annotator-resources]}
`))
	env.Create(t, roleBindings, ns, h.FromYAML(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: restricted}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: restricted}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: `+user+`}]
`))
	// And namespaces, which the controller watches for opt-outs.
	grantWatchNamespaces(t, "e2e-prune-restricted-"+ns, user)
	replaceFile(t, rulesFile, podsRules)
	p := startRun(t, append(args, "--as", user)...)
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
		body, err := p.ReadMetrics()
		return err == nil && promtext.MetricValue(body, "kube_annotator_prune_pending", map[string]string{"resource": "deployments.apps", "reason": "Forbidden"}) == 1, nil
	})
	if err != nil {
		t.Fatalf("kube_annotator_prune_pending{resource=deployments.apps,reason=Forbidden} not 1 within 15s:\n%s", p.Output(t))
	}
	waitLog(t, p, 5*time.Second, "Cannot prune a resource no rule names; it stays in the record", "deployments.apps", 1)
	waitRecord(t, time.Second, ns, "kube-annotator", "deployments.apps@"+ns, "pods@"+ns)
	if !carriesKey(t, ns, web, "sample-controller") {
		t.Errorf("the Deployment lost its key although patching it is forbidden")
	}
	if code := p.Ready(t); code != 200 {
		t.Errorf("/readyz = %d while a forbidden prune waits, want 200", code)
	}
}
