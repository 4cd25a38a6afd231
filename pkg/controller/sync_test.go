package controller

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/controller/retry"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
)

func TestSyncHandler(t *testing.T) {
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	x := Key{configMaps, "ns", "x"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", nil)
	const (
		patchAB = `{"metadata":{"annotations":{"a":"1","b":"2"}}}`
		changed = "Normal Annotated Changed annotations a, b"
	)
	labelled := fixture.ConfigMap("ns", "x", nil)
	labelled.SetLabels(map[string]string{"app": "web"})
	tests := []struct {
		name        string
		rules       string
		cached      *unstructured.Unstructured
		notOnServer bool
		react       k8stesting.ReactionFunc // answers patches when set
		key         Key
		wantPatches []patchCall
		wantErr     func(error) bool // nil: no error
		wantEvents  []string
		wantWrites  [2]float64 // writes_total by result: success, error
	}{
		{name: "missing keys", rules: setAB, cached: fixture.ConfigMap("ns", "x", nil), key: x,
			wantPatches: []patchCall{merge("ns", "x", patchAB)},
			wantEvents:  []string{changed}, wantWrites: [2]float64{1, 0}},
		{name: "only the keys that differ", rules: setAB,
			cached: fixture.ConfigMap("ns", "x", map[string]string{"a": "0", "b": "2", "user": "keep"}), key: x,
			wantPatches: []patchCall{merge("ns", "x", `{"metadata":{"annotations":{"a":"1"}}}`)},
			wantEvents:  []string{"Normal Annotated Changed annotations a"}, wantWrites: [2]float64{1, 0}},
		{name: "converged", rules: setAB,
			cached: fixture.ConfigMap("ns", "x", map[string]string{"a": "1", "b": "2", "user": "keep"}), key: x},
		{name: "labels and removals",
			rules:  "rules:\n- {name: r, resources: [configmaps], labels: {tier: web}, removeAnnotations: [old, gone]}\n",
			cached: fixture.ConfigMap("ns", "x", map[string]string{"old": "x", "user": "keep"}), key: x,
			wantPatches: []patchCall{merge("ns", "x", `{"metadata":{"annotations":{"old":null},"labels":{"tier":"web"}}}`)},
			wantEvents:  []string{"Normal Annotated Changed annotations -old; labels tier"}, wantWrites: [2]float64{1, 0}},
		{name: "keys we set that no rule wants are deleted", rules: setAB,
			cached: fixture.WithOwned(fixture.ConfigMap("ns", "x", map[string]string{"a": "1", "b": "2", "stale": "x"}), reconcile.FieldManager, "a", "stale"),
			key:    x, wantPatches: []patchCall{merge("ns", "x", `{"metadata":{"annotations":{"stale":null}}}`)},
			wantEvents: []string{"Normal Annotated Changed annotations -stale"}, wantWrites: [2]float64{1, 0}},
		{name: "keys others set are kept", rules: setAB,
			cached: fixture.WithOwned(fixture.ConfigMap("ns", "x", map[string]string{"a": "1", "b": "2", "stale": "x"}), "kubectl", "stale"), key: x},
		{name: "excluded namespace: only our keys deleted", rules: setAB,
			cached:      fixture.WithOwned(fixture.ConfigMap("kube-system", "x", map[string]string{"a": "1", "user": "x"}), reconcile.FieldManager, "a"),
			key:         Key{configMaps, "kube-system", "x"},
			wantPatches: []patchCall{merge("kube-system", "x", `{"metadata":{"annotations":{"a":null}}}`)},
			wantEvents:  []string{"Normal Annotated Changed annotations -a"}, wantWrites: [2]float64{1, 0}},
		{name: "selector does not match", rules: "rules:\n- {name: r, resources: [configmaps], selector: app=web, annotations: {a: '1'}}\n",
			cached: fixture.ConfigMap("ns", "x", nil), key: x},
		{name: "rules conflict: file order decides", rules: twoTeams, cached: labelled, key: x,
			wantPatches: []patchCall{merge("ns", "x", `{"metadata":{"annotations":{"team":"a"}}}`)},
			wantEvents: []string{"Warning RulesConflict Rules one and two want different values for annotation team; one wins (file order)",
				"Normal Annotated Changed annotations team"}, wantWrites: [2]float64{1, 0}},
		{name: "untracked object: apply pinned to the cached resourceVersion", rules: setAB,
			cached: fixture.Untracked("ConfigMap", "ns", "x", map[string]string{"user": "keep"}), key: x,
			react: answer(fixture.ConfigMap("ns", "x", nil)),
			wantPatches: []patchCall{apply("ns", "x",
				`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"ns","resourceVersion":"1","annotations":{"a":"1","b":"2"}}}`)},
			wantEvents: []string{changed}, wantWrites: [2]float64{1, 0}},
		{name: "untracked object: apply the sets, then merge-patch the deletions",
			rules:  "rules:\n- {name: r, resources: [namespaces], labels: {tier: web}, removeAnnotations: [old]}\n",
			cached: fixture.Untracked("Namespace", "", "team-a", map[string]string{"old": "x"}), key: Key{namespaces, "", "team-a"},
			react: answer(fixture.Object("Namespace", "", "team-a", nil)),
			wantPatches: []patchCall{
				apply("", "team-a", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a","resourceVersion":"1","labels":{"tier":"web"}}}`),
				merge("", "team-a", `{"metadata":{"annotations":{"old":null}}}`),
			},
			wantEvents: []string{"Normal Annotated Changed annotations -old; labels tier"}, wantWrites: [2]float64{2, 0}},
		{name: "not in cache", rules: setAB, cached: fixture.ConfigMap("ns", "x", nil), key: Key{configMaps, "ns", "y"}},
		{name: "other namespace not in cache", rules: setAB, cached: fixture.ConfigMap("ns", "x", nil), key: Key{configMaps, "other", "x"}},
		{name: "resource not ruled", rules: setAB, cached: fixture.ConfigMap("ns", "x", nil), key: Key{secrets, "ns", "x"}},
		{name: "cluster-scoped", rules: setAB, cached: fixture.Object("Namespace", "", "team-a", nil), key: Key{namespaces, "", "team-a"},
			wantPatches: []patchCall{merge("", "team-a", patchAB)},
			wantEvents:  []string{changed}, wantWrites: [2]float64{1, 0}},
		{name: "excluded Namespace", rules: setAB, cached: fixture.Object("Namespace", "", "kube-system", nil), key: Key{namespaces, "", "kube-system"}},
		{name: "deleted on the server", rules: setAB, cached: fixture.ConfigMap("ns", "x", nil), notOnServer: true, key: x,
			wantPatches: []patchCall{merge("ns", "x", patchAB)}, wantWrites: [2]float64{0, 1}},
		{name: "conflict is transient", rules: setAB, cached: fixture.ConfigMap("ns", "x", nil), key: x,
			react:       react(apierrors.NewConflict(configMaps.GroupResource(), "x", errors.New("changed"))),
			wantPatches: []patchCall{merge("ns", "x", patchAB)},
			wantErr:     func(err error) bool { return apierrors.IsConflict(err) && !retry.Permanent(err) },
			wantWrites:  [2]float64{0, 1}},
		{name: "invalid is permanent", rules: setAB, cached: fixture.ConfigMap("ns", "x", nil), key: x,
			react:       react(invalid),
			wantPatches: []patchCall{merge("ns", "x", patchAB)},
			wantErr:     retry.Permanent,
			wantEvents:  []string{"Warning AnnotateFailed Could not change annotations a, b: " + invalid.Error()},
			wantWrites:  [2]float64{0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			var client = newClient()
			if !tc.notOnServer {
				client = newClient(tc.cached)
			}
			if tc.react != nil {
				client.PrependReactor("patch", "*", tc.react)
			}
			recorder, m := events.NewFakeRecorder(10), metrics.New()
			c := withCache(t, client, Options{Recorder: recorder, Metrics: m}, fixture.Compile(t, tc.rules), tc.cached)

			err := c.syncHandler(ctx, tc.key)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Errorf("syncHandler() error = %v, want nil", err)
			case tc.wantErr != nil && (err == nil || !tc.wantErr(err)):
				t.Errorf("syncHandler() error = %v, want a matching error", err)
			case err != nil && !strings.HasPrefix(err.Error(), "patch "+tc.key.String()+": "):
				t.Errorf("syncHandler() error = %q, want it to name the key", err)
			}
			if got := patches(client); !reflect.DeepEqual(got, tc.wantPatches) {
				t.Errorf("patches = %v, want %v", got, tc.wantPatches)
			}
			if n := verbs(client)["get"]; n != 0 {
				t.Errorf("%d GET requests, want none: sync reads the cache", n)
			}
			if got := drain(recorder.Events); !slices.Equal(got, tc.wantEvents) {
				t.Errorf("events = %q, want %q", got, tc.wantEvents)
			}
			resource := tc.key.GVR.GroupResource().String()
			for i, result := range []string{metrics.Success, metrics.Error} {
				if got := value(t, m.Writes.WithLabelValues(resource, result)); got != tc.wantWrites[i] {
					t.Errorf("writes_total{result=%q} = %v, want %v", result, got, tc.wantWrites[i])
				}
			}
			wantConflicts := 0.0
			if tc.rules == twoTeams && tc.cached == labelled {
				wantConflicts = 1
			}
			if got := value(t, m.Conflicts.WithLabelValues(resource)); got != wantConflicts {
				t.Errorf("conflicts = %v, want %v", got, wantConflicts)
			}
		})
	}
}

// TestSyncHandlerExpectations syncs one object again and again, as the
// informer's cache moves, with a server that answers each patch with a
// given resourceVersion.
func TestSyncHandlerExpectations(t *testing.T) {
	want := map[string]string{"a": "1"}
	x := Key{configMaps, "ns", "x"}
	type step struct {
		cachedRV    string
		cachedAnn   map[string]string
		serverRV    string // resourceVersion the server answers a patch with
		wantPatches int    // in total, so far
		wantExpect  int
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"echo pending, then arrives", []step{
			{"1", nil, "2", 1, 1},
			{"1", nil, "2", 1, 1}, // the cache has not seen our write yet
			{"2", want, "", 1, 0},
		}},
		{"someone removes the annotation after the echo", []step{
			{"1", nil, "2", 1, 1},
			{"2", want, "", 1, 0},
			{"3", nil, "4", 2, 1},
		}},
		{"another writer gets in between", []step{
			{"1", nil, "2", 1, 1},
			{"3", map[string]string{"a": "0"}, "4", 2, 1},
		}},
		{"no-op patch keeps the resourceVersion", []step{
			{"1", nil, "1", 1, 0},
			{"1", nil, "1", 2, 0}, // nothing to wait for: patch again
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			client := newClient()
			var serverRV string
			client.PrependReactor("patch", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
				u := fixture.ConfigMap("ns", "x", want)
				u.SetResourceVersion(serverRV)
				return true, u, nil
			})
			c := withCache(t, client, Options{}, fixture.Compile(t, "rules:\n- {name: a, resources: [configmaps], annotations: {a: '1'}}\n"))
			store := informerOf(c, configMaps).Informer.GetStore()
			for i, s := range tc.steps {
				u := fixture.ConfigMap("ns", "x", s.cachedAnn)
				u.SetResourceVersion(s.cachedRV)
				if err := store.Update(u); err != nil {
					t.Fatal(err)
				}
				serverRV = s.serverRV
				if err := c.syncHandler(ctx, x); err != nil {
					t.Fatalf("step %d: syncHandler() error = %v", i, err)
				}
				if got := len(patches(client)); got != s.wantPatches {
					t.Errorf("step %d: %d patches so far, want %d", i, got, s.wantPatches)
				}
				if got := c.expect.Len(); got != s.wantExpect {
					t.Errorf("step %d: %d expectations, want %d", i, got, s.wantExpect)
				}
			}
		})
	}
}
