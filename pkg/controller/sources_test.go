package controller

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// settingsSource is a source that only this test knows: the ConfigMap in
// a Pod's namespace named like its ServiceAccount (spec.serviceAccountName).
// It is one entry, data only; nothing else is written for it.
var settingsSource = &source.Source{
	Field:    "fromSettings",
	Resource: rulestest.ConfigMaps,
	For:      pods.GroupResource(),
	Names:    []string{"pods"},
	Ref:      []string{"spec", "serviceAccountName"},
	What:     "the Pod's settings",
	Unset:    "the Pod names no ServiceAccount",
	Reason:   "rules read the settings of Pods",
}

// settingsRules compiles a rule that sets label team of every Pod to the
// label team of its settings ConfigMap: a rules file gives no value form
// for settingsSource, so the key is set on the parsed rule.
func settingsRules(t *testing.T) *rules.Set {
	t.Helper()
	f, err := rules.Parse("rules.yaml", []byte("rules:\n- {name: team, resources: [pods], labels: {team: {fromNode: {label: team}, default: none}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	f.Rules[0].Labels.FromRelated = map[string]rulefile.RelatedKey{"team": {Source: settingsSource, Kind: "label", Key: "team"}}
	set, unresolved, err := rules.Compile("rules.yaml", f, func(name string) (source.Resource, error) {
		return rulestest.Pods, nil
	})
	if err != nil || len(unresolved) > 0 {
		t.Fatalf("compile: %v %v", err, unresolved)
	}
	return set
}

// podAs returns a Pod in namespace ns run as the ServiceAccount sa.
func podAs(ns, name, sa string) *unstructured.Unstructured {
	u := fixture.Object("Pod", ns, name, nil)
	if err := unstructured.SetNestedField(u.Object, sa, "spec", "serviceAccountName"); err != nil {
		panic(err)
	}
	return u
}

// TestSourceOfOneEntry checks that a source added as one entry, and read
// by a rule's key, is watched as the shipped ones are: the Pods naming a
// ConfigMap get its label; when it changes exactly those Pods are synced
// again, and a ConfigMap no Pod names changes nothing.
func TestSourceOfOneEntry(t *testing.T) {
	settings := func(ns, name, team string) *unstructured.Unstructured {
		u := fixture.Object("ConfigMap", ns, name, nil)
		u.SetLabels(map[string]string{"team": team})
		return u
	}
	client := newClient(settings("shop", "web", "payments"), settings("shop", "batch", "data"), settings("tools", "web", "infra"),
		podAs("shop", "web-1", "web"), podAs("shop", "web-2", "web"), podAs("shop", "job-1", "batch"), podAs("tools", "dns-1", "web"))
	_, ctx := ktesting.NewTestContext(t)
	c := newController(client, Options{})
	c.SetRules(ctx, settingsRules(t))
	runController(t, ctx, c)

	teams := func() map[string]string {
		out := map[string]string{}
		for _, ns := range []string{"shop", "tools"} {
			l, err := client.Tracker().List(pods, pods.GroupVersion().WithKind("Pod"), ns)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range l.(*unstructured.UnstructuredList).Items {
				out[ns+"/"+o.GetName()] = o.GetLabels()["team"]
			}
		}
		return out
	}
	want := func(what string, w map[string]string) {
		t.Helper()
		testutil.WaitFor(t, 10*time.Second, what, func() bool {
			got := teams()
			for k, v := range w {
				if got[k] != v {
					return false
				}
			}
			return true
		})
	}
	want("each Pod its settings' team, by namespace", map[string]string{
		"shop/web-1": "payments", "shop/web-2": "payments", "shop/job-1": "data", "tools/dns-1": "infra"})
	c.mu.RLock()
	running := c.sources[settingsSource] != nil
	c.mu.RUnlock()
	if !running {
		t.Fatal("no informer of the ConfigMaps while a rule reads them")
	}

	before := len(patches(client))
	relabelled := settings("shop", "web", "checkout")
	relabelled.SetResourceVersion("2")
	if err := client.Tracker().Update(rulestest.ConfigMaps.GVR, relabelled, "shop"); err != nil {
		t.Fatal(err)
	}
	want("the Pods naming the relabelled ConfigMap follow it", map[string]string{
		"shop/web-1": "checkout", "shop/web-2": "checkout", "shop/job-1": "data", "tools/dns-1": "infra"})
	testutil.WaitFor(t, 10*time.Second, "the queue drained", func() bool { return c.queue.Len() == 0 })
	var patched []string
	for _, p := range patches(client)[before:] {
		patched = append(patched, p.namespace+"/"+p.name)
	}
	slices.Sort(patched)
	if want := []string{"shop/web-1", "shop/web-2"}; !slices.Equal(patched, want) {
		t.Errorf("PATCH after relabelling the ConfigMap two Pods name: %v, want %v", patched, want)
	}
}
