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
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// The resources of the fromRef tests.
var (
	persistentVolumes = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}
	claims            = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
)

// volume returns a PersistentVolume whose spec.claimRef names the claim
// shop/claim of uid, or none when claim is "".
func volume(name, claim, uid string) *unstructured.Unstructured {
	u := fixture.Object("PersistentVolume", "", name, nil)
	u.SetUID(types.UID("pv-" + name))
	if claim != "" {
		u.Object["spec"] = map[string]any{"claimRef": map[string]any{"kind": "PersistentVolumeClaim", "namespace": "shop", "name": claim, "uid": uid}}
	}
	return u
}

// TestRefChangeSyncsItsObjects checks that a PersistentVolume's value
// read from the claim its spec.claimRef names follows the claim, and that
// relabelling one claim syncs exactly the volumes that name it, through
// the index of the volumes' informer by the claim each names.
func TestRefChangeSyncsItsObjects(t *testing.T) {
	data := fixture.Object("PersistentVolumeClaim", "shop", "data", nil)
	data.SetUID("c-data")
	data.SetLabels(map[string]string{"team": "payments"})
	logs := fixture.Object("PersistentVolumeClaim", "shop", "logs", nil)
	logs.SetUID("c-logs")
	logs.SetLabels(map[string]string{"team": "core"})
	client := newClient(data, logs, volume("pv-a", "data", "c-data"), volume("pv-b", "data", "c-data"),
		volume("pv-c", "logs", "c-logs"), volume("pv-stale", "data", "c-old"), volume("pv-free", "", ""))
	_, ctx := ktesting.NewTestContext(t)
	c := newController(client, Options{})
	set := compileVolumes(t, "rules:\n- {name: team, resources: [persistentvolumes], labels: {team: {fromRef: {resource: persistentvolumeclaims, field: spec.claimRef, label: team}, default: none}}}\n")
	c.SetRules(ctx, set)
	runController(t, ctx, c)

	want := func(what string, w map[string]string) {
		t.Helper()
		waitLabel(t, client, persistentVolumes, "PersistentVolume", "", "team", what, w)
	}
	want("each volume its claim's team", map[string]string{"pv-a": "payments", "pv-b": "payments", "pv-c": "core", "pv-stale": "none", "pv-free": "none"})

	before := len(patches(client))
	relabelled := data.DeepCopy()
	relabelled.SetLabels(map[string]string{"team": "checkout"})
	relabelled.SetResourceVersion("2")
	if err := client.Tracker().Update(claims, relabelled, "shop"); err != nil {
		t.Fatal(err)
	}
	want("the relabelled claim's volumes follow it", map[string]string{"pv-a": "checkout", "pv-b": "checkout", "pv-c": "core", "pv-stale": "none", "pv-free": "none"})
	testutil.WaitFor(t, 10*time.Second, "the queue drained", func() bool { return c.queue.Len() == 0 })
	var patched []string
	for _, p := range patches(client)[before:] {
		patched = append(patched, p.name)
	}
	slices.Sort(patched)
	if want := []string{"pv-a", "pv-b"}; !slices.Equal(patched, want) {
		t.Errorf("PATCH after relabelling one claim: %v, want the two volumes that name it only", patched)
	}
}

// compileVolumes compiles rules for PersistentVolumes that read their
// claims.
func compileVolumes(t testing.TB, content string) *rules.Set {
	t.Helper()
	return compileResolved(t, content, func(name string) (source.Resource, error) {
		if name == "persistentvolumeclaims" {
			return source.Resource{GVR: claims, Kind: "PersistentVolumeClaim", Namespaced: true}, nil
		}
		return source.Resource{GVR: persistentVolumes, Kind: "PersistentVolume"}, nil
	})
}
