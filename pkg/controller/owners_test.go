package controller

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// The owner resources of the tests.
var (
	replicaSets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	deployments = rulestest.Deployments.GVR
)

// owned returns an object of kind in apiVersion, in namespace shop, with
// uid, owned (controller: true) by owner when it is not nil.
func owned(apiVersion, kind, name string, labels map[string]string, owner *unstructured.Unstructured) *unstructured.Unstructured {
	u := fixture.Object(kind, "shop", name, nil)
	u.SetAPIVersion(apiVersion)
	u.SetUID(types.UID(kind + "-" + name))
	u.SetLabels(labels)
	rulestest.SetController(u, owner)
	return u
}

// TestOwnerChangeSyncsItsObjects checks that a Pod's value read from its
// Deployment, through its ReplicaSet, follows the Deployment, and that
// relabelling one Deployment syncs exactly the Pods below it: through
// the owner index of the ReplicaSets' informer, then of the Pods'.
func TestOwnerChangeSyncsItsObjects(t *testing.T) {
	web := owned("apps/v1", "Deployment", "web", map[string]string{"team": "payments"}, nil)
	api := owned("apps/v1", "Deployment", "api", map[string]string{"team": "core"}, nil)
	webRS, apiRS := owned("apps/v1", "ReplicaSet", "web-1", nil, web), owned("apps/v1", "ReplicaSet", "api-1", nil, api)
	client := newClient(web, api, webRS, apiRS,
		owned("v1", "Pod", "web-1-a", nil, webRS), owned("v1", "Pod", "web-1-b", nil, webRS), owned("v1", "Pod", "api-1-a", nil, apiRS),
		owned("v1", "Pod", "bare", nil, nil))
	_, ctx := ktesting.NewTestContext(t)
	c := newController(client, Options{})
	set := compileOwners(t, "rules:\n- {name: team, resources: [pods], labels: {team: {fromOwner: {label: team, through: [replicasets.apps, deployments.apps]}, default: none}}}\n")
	c.SetRules(ctx, set)
	runController(t, ctx, c)

	want := func(what string, w map[string]string) {
		t.Helper()
		waitLabel(t, client, pods, "Pod", "shop", "team", what, w)
	}
	want("each Pod its Deployment's team", map[string]string{"web-1-a": "payments", "web-1-b": "payments", "api-1-a": "core", "bare": "none"})

	before := len(patches(client))
	relabelled := web.DeepCopy()
	relabelled.SetLabels(map[string]string{"team": "checkout"})
	relabelled.SetResourceVersion("2")
	if err := client.Tracker().Update(rulestest.Deployments.GVR, relabelled, "shop"); err != nil {
		t.Fatal(err)
	}
	want("the relabelled Deployment's Pods follow it", map[string]string{"web-1-a": "checkout", "web-1-b": "checkout", "api-1-a": "core", "bare": "none"})
	testutil.WaitFor(t, 10*time.Second, "the queue drained", func() bool { return c.queue.Len() == 0 })
	var patched []string
	for _, p := range patches(client)[before:] {
		patched = append(patched, p.name)
	}
	slices.Sort(patched)
	if want := []string{"web-1-a", "web-1-b"}; !slices.Equal(patched, want) {
		t.Errorf("PATCH after relabelling one Deployment: %v, want its two Pods only", patched)
	}
}

// compileOwners compiles content, resolving the owner resources of these
// tests and the Pods.
func compileOwners(t testing.TB, content string) *rules.Set {
	t.Helper()
	return compileResolved(t, content, func(name string) (source.Resource, error) {
		switch name {
		case "replicasets.apps":
			return source.Resource{GVR: replicaSets, Kind: "ReplicaSet", Namespaced: true}, nil
		case "deployments.apps":
			return rulestest.Deployments, nil
		}
		return rulestest.Pods, nil
	})
}

// compileResolved compiles a rules file of content, resolving its
// resource names with resolve.
func compileResolved(t testing.TB, content string, resolve func(string) (source.Resource, error)) *rules.Set {
	t.Helper()
	f, err := rules.Parse("rules.yaml", []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	set, unresolved, err := rules.Compile("rules.yaml", f, resolve)
	if err != nil || len(unresolved) > 0 {
		t.Fatalf("compile: %v %v", err, unresolved)
	}
	return set
}
