package e2e

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// With the policies `kube-annotator admission` prints applied, and no
// controller running, objects carry the rules' annotations in the very
// response to the request that creates them: a Deployment, a Pod and a
// Frigate created by a user, and the ReplicaSet and Pods that
// kube-controller-manager creates. The API server records no owner for
// keys set at admission; the marker lists them instead.
func TestAdmissionAtCreate(t *testing.T) {
	ns := env.NewNamespace(t)
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: workloads
  resources: [deployments, replicasets, pods]
  namespaces: [%[1]s]
  annotations: {sample-controller: "True", app: {jsonPath: '{.metadata.labels.app}'}}
- name: frigates
  resources: [frigates.ship.nwiizo.dev]
  namespaces: [%[1]s]
  annotations: {sample-controller: "True", foo: {jsonPath: '{.spec.foo}'}}
- name: legacy
  resources: [configmaps]
  namespaces: [%[1]s]
  annotations: {first: {jsonPath: '{.data[*]}'}}
  removeAnnotations: [deprecated]
`, ns)+probeRule(ns))
	stderr := applyAdmission(t, rulesFile)
	for _, want := range []string{
		"rule legacy: annotations.first: a slice, a wildcard or a negative index cannot be read at admission",
		"rule legacy: removeAnnotations: left to the controller",
		"rule legacy: nothing is set at admission; the controller enforces the whole rule",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("admission did not say %q:\n%s", want, stderr)
		}
	}
	waitPolicies(t, ns, 10*time.Second)

	dep := h.Deployment(t, ns, "web", 2)
	const theirs = "  kept\tbyte for byte\n"
	dep.SetAnnotations(map[string]string{"user": theirs})
	created := map[string]*unstructured.Unstructured{
		"deployment": env.Create(t, h.Deployments, ns, dep),
		"pod":        env.Create(t, h.Pods, ns, h.Pod(t, ns, "solo")),
		"frigate":    env.Create(t, h.Frigates, ns, h.FrigateSample(t, ns)),
	}
	checkAnnotations(t, "created deployment", created["deployment"], map[string]string{
		"sample-controller": "True", "user": theirs, marker("deployments.apps"): "sample-controller"})
	checkAnnotations(t, "created pod", created["pod"], map[string]string{"sample-controller": "True", "app": "", marker("pods"): "sample-controller"})
	checkAnnotations(t, "created frigate", created["frigate"], map[string]string{
		"sample-controller": "True", "foo": "bar", marker("frigates.ship.nwiizo.dev"): "foo,sample-controller"})
	for what, obj := range created {
		if owners := ownersOf(t, obj, "sample-controller"); len(owners) > 0 {
			t.Errorf("created %s: managedFields name %q as owning the key set at admission, want no owner", what, owners)
		}
		if owners := ownersOf(t, obj, "user"); what == "deployment" && len(owners) != 1 {
			t.Errorf("created deployment: the creator's key owned by %q, want its creator alone", owners)
		}
	}

	startControllerManager(t)
	var made []*unstructured.Unstructured
	waitFor(t, 60*time.Second, "kube-controller-manager creates the ReplicaSet and its 2 Pods", func() bool {
		made = append(list(t, h.ReplicaSets, ns, "app=web"), list(t, h.Pods, ns, "app=web")...)
		return len(made) == 3
	})
	for _, obj := range made {
		if obj.GetKind() == "ReplicaSet" {
			// kube-controller-manager copies the Deployment's annotations,
			// its marker included, onto the ReplicaSet it creates: those
			// keys are its own; the ReplicaSet's marker lists what the
			// policy added.
			checkAnnotations(t, "ReplicaSet", obj, map[string]string{"sample-controller": "True", "app": "web",
				marker("replicasets.apps"): "app", marker("deployments.apps"): "sample-controller"})
			continue
		}
		checkAnnotations(t, "Pod", obj, map[string]string{"sample-controller": "True", "app": "web", marker("pods"): "app,sample-controller"})
		if owners := ownersOf(t, obj, "sample-controller"); len(owners) > 0 {
			t.Errorf("Pod %s: managedFields name %q as owning the key set at admission, want no owner", obj.GetName(), owners)
		}
	}

	// What the controller would change: nothing (but the rule left to it).
	out, errOut, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns)
	if code != 0 {
		t.Errorf("diff: exit %d, want 0 (nothing to change):\n%s%s", code, out, errOut)
	}
}

// list lists the objects of gvr in ns with the label selector sel.
func list(t *testing.T, gvr schema.GroupVersionResource, ns, sel string) []*unstructured.Unstructured {
	t.Helper()
	l, err := env.Dynamic.Resource(gvr).Namespace(ns).List(t.Context(), metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out
}

// admissionObjects is how many objects TestAdmissionControllerWritesNothing
// creates.
const admissionObjects = 1000

// With the policies applied and the controller running, objects created
// already carry what the rules want: the controller sees every one of them
// and writes nothing.
func TestAdmissionControllerWritesNothing(t *testing.T) {
	ns := env.NewNamespace(t)
	rulesFile := writeFile(t, "rules.yaml", fmt.Sprintf(`rules:
- name: cms
  resources: [configmaps]
  namespaces: [%[1]s]
  annotations: {team: a, data: {jsonPath: '{.data.k}'}}
  labels: {tier: web}
`, ns)+probeRule(ns))
	applyAdmission(t, rulesFile)
	waitPolicies(t, ns, 10*time.Second)
	p := startRun(t, "--rules", rulesFile)
	waitFor(t, 30*time.Second, "the controller is ready", func() bool { return p.ready(t) == 200 })
	syncs := p.metric(t, "kube_annotator_syncs_total")
	before := requests(t)

	var wg sync.WaitGroup
	var bare atomic.Int64
	sem := make(chan struct{}, 8)
	for i := range admissionObjects {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			cm := h.Object("v1", "ConfigMap", ns, fmt.Sprintf("cm-%d", i))
			cm.Object["data"] = map[string]any{"k": fmt.Sprint(i)}
			got := env.Create(t, h.ConfigMaps, ns, cm)
			if got.GetAnnotations()["team"] != "a" || got.GetAnnotations()["data"] != fmt.Sprint(i) || got.GetLabels()["tier"] != "web" {
				bare.Add(1)
			}
		})
	}
	wg.Wait()
	if n := bare.Load(); n > 0 {
		t.Errorf("%d of %d ConfigMaps were created without what the rules want", n, admissionObjects)
	}
	took := waitFor(t, 60*time.Second, "the controller syncs every ConfigMap created", func() bool {
		return p.metric(t, "kube_annotator_syncs_total")-syncs >= admissionObjects
	})
	t.Logf("the controller synced the %d ConfigMaps %v after the last was created", admissionObjects, took.Round(time.Millisecond))
	if n := patches(t, before); n != 0 {
		t.Errorf("the API server served %d patches of ConfigMaps, want 0", n)
	}
	if n := p.writes(t, "success") + p.writes(t, "error"); n != 0 {
		t.Errorf("the controller wrote %d times, want 0", n)
	}
}
