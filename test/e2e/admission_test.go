package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// With the policies `kube-annotator admission` prints applied, and no
// controller running, objects carry the rules' annotations in the very
// response to the request that creates them: a Deployment, a Pod and a
// Frigate created by a user, and the ReplicaSet and Pods that
// kube-controller-manager creates (as their watch events show them
// created). The API server records no owner for
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
  annotations: {first: {jsonPath: '{.data.*}'}}
  removeAnnotations: [deprecated]
`, ns)+probeRule(ns))
	if !env.Features.MutatingAdmissionPolicyV1 {
		admissionRefused(t, rulesFile)
		return
	}
	stderr := applyAdmission(t, rulesFile)
	for _, want := range []string{
		"rule legacy: annotations.first: a wildcard cannot be read at admission",
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
	optOut := h.Pod(t, ns, "opted-out")
	optOut.SetAnnotations(map[string]string{"kube-annotator.io/ignore": "true"})
	checkAnnotations(t, "created pod that opts out", env.Create(t, h.Pods, ns, optOut), map[string]string{"sample-controller": "", marker("pods"): ""})
	for what, obj := range created {
		if owners := fieldOwners(t, obj, "f:annotations", "sample-controller"); len(owners) > 0 {
			t.Errorf("created %s: managedFields name %q as owning the key set at admission, want no owner", what, owners)
		}
		if owners := fieldOwners(t, obj, "f:annotations", "user"); what == "deployment" && len(owners) != 1 {
			t.Errorf("created deployment: the creator's key owned by %q, want its creator alone", owners)
		}
	}

	// The ReplicaSet and Pods as the API server stored them at creation.
	createdByKCM := watchCreated(t, ns, "app=web", h.ReplicaSets, h.Pods)
	startControllerManager(t, ns)
	var made []*unstructured.Unstructured
	waitFor(t, 60*time.Second, "kube-controller-manager creates the ReplicaSet and its 2 Pods", func() bool {
		made = createdByKCM()
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
		if owners := fieldOwners(t, obj, "f:annotations", "sample-controller"); len(owners) > 0 {
			t.Errorf("Pod %s: managedFields name %q as owning the key set at admission, want no owner", obj.GetName(), owners)
		}
	}

	// What the controller would change: nothing (but the rule left to it).
	out, errOut, code := runCLI(t, "diff", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns)
	if code != 0 {
		t.Errorf("diff: exit %d, want 0 (nothing to change):\n%s%s", code, out, errOut)
	}
}

// admissionObjects is how many objects TestAdmissionControllerWritesNothing
// creates.
const admissionObjects = 1000

// With the policies applied and the controller running, objects created
// already carry what the rules want: the controller sees every one of them
// and writes nothing.
func TestAdmissionControllerWritesNothing(t *testing.T) {
	ns := env.NewNamespace(t)
	cms := fmt.Sprintf(`rules:
- name: cms
  resources: [configmaps]
  namespaces: [%[1]s]
  names: ['cm-*'] # not kube-root-ca.crt, which may be created before the policies
  annotations: {team: a, data: {jsonPath: '{.data.k}'}}
  labels: {tier: web}
`, ns)
	rulesFile := writeFile(t, "rules.yaml", cms+probeRule(ns))
	if !env.Features.MutatingAdmissionPolicyV1 {
		admissionRefused(t, rulesFile)
		return
	}
	applyAdmission(t, rulesFile)
	waitPolicies(t, ns, 10*time.Second)
	// The controller runs the ConfigMaps' rule alone, and its writes are
	// counted from the first ConfigMap's creation: what is measured is
	// what it writes on the objects the policies annotated.
	p := startRun(t, "--rules", writeFile(t, "controller.yaml", cms))
	waitFor(t, 30*time.Second, "the controller is ready", func() bool { return p.Ready(t) == 200 })
	syncs := p.Metric(t, "kube_annotator_syncs_total")
	before := requests(t)
	startup := p.Writes(t, "success") + p.Writes(t, "error")
	if startup != 0 {
		t.Logf("the controller wrote %d times before the ConfigMaps were created", startup)
	}

	var bare atomic.Int64
	inParallel(admissionObjects, func(i int) {
		cm := h.Object("v1", "ConfigMap", ns, fmt.Sprintf("cm-%d", i))
		cm.Object["data"] = map[string]any{"k": fmt.Sprint(i)}
		got := env.Create(t, h.ConfigMaps, ns, cm)
		if got.GetAnnotations()["team"] != "a" || got.GetAnnotations()["data"] != fmt.Sprint(i) || got.GetLabels()["tier"] != "web" {
			bare.Add(1)
		}
	})
	if n := bare.Load(); n > 0 {
		t.Errorf("%d of %d ConfigMaps were created without what the rules want", n, admissionObjects)
	}
	took := waitFor(t, 60*time.Second, "the controller syncs every ConfigMap created", func() bool {
		return p.Metric(t, "kube_annotator_syncs_total")-syncs >= admissionObjects
	})
	t.Logf("the controller synced the %d ConfigMaps %v after the last was created", admissionObjects, took.Round(time.Millisecond))
	// The API server's count of PATCH on ConfigMaps is cluster-wide and
	// counts every client's (it once counted 4 that the controller's own
	// count did not have; the API server's own controllers create and
	// update ConfigMaps, they never PATCH them). What the controller wrote
	// on the ConfigMaps of ns, their managedFields and its count say.
	t.Logf("the API server served %d PATCH of ConfigMaps, in every namespace", patches(t, before))
	l, err := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range l.Items {
		for _, e := range cm.GetManagedFields() {
			if e.Manager == "kube-annotator" {
				t.Errorf("ConfigMap %s has fields of the controller (%s at %v): it wrote it", cm.GetName(), e.Operation, e.Time)
			}
		}
	}
	if n := p.Writes(t, "success") + p.Writes(t, "error") - startup; n != 0 {
		t.Errorf("the controller wrote %d times while and after the ConfigMaps were created, want 0", n)
	}
}

// diffChanges runs diff on the rules file at path in ns and returns the
// changes it reports, by object, without the markers'.
func diffChanges(t *testing.T, path, ns string) (map[string][]string, int) {
	t.Helper()
	out, errOut, code := runCLI(t, "diff", "--rules", path, "--kubeconfig", env.Kubeconfig, "-n", ns, "-o", "json")
	if code == 2 {
		t.Fatalf("diff: exit 2: %s", errOut)
	}
	var pending []struct {
		Name    string
		Changes []struct{ Kind, Key string }
	}
	if err := json.Unmarshal([]byte(out), &pending); err != nil {
		t.Fatalf("diff -o json: %v\n%s", err, out)
	}
	changes := map[string][]string{}
	for _, o := range pending {
		for _, c := range o.Changes {
			if !strings.HasSuffix(c.Key, "admission.kube-annotator.io/kube-annotator") {
				changes[o.Name] = append(changes[o.Name], c.Kind+" "+c.Key)
			}
		}
	}
	return changes, code
}

// diff and once report and do the same for an object annotated at
// admission as for one the controller annotated: nothing while the rules
// want what they carry, and the removal of the same keys when a rule goes.
func TestAdmissionDiffAndOnceAgree(t *testing.T) {
	ns := env.NewNamespace(t)
	rule := fmt.Sprintf("- {name: r, resources: [configmaps], namespaces: [%s], annotations: {a: '1'}, labels: {l: x}}\n", ns)
	rulesFile := writeFile(t, "rules.yaml", "rules:\n"+rule+probeRule(ns))
	if !env.Features.MutatingAdmissionPolicyV1 {
		admissionRefused(t, rulesFile)
		return
	}
	env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, "by-controller"))
	if out, errOut, code := runCLI(t, "once", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns); code != 0 {
		t.Fatalf("once: exit %d\n%s%s", code, out, errOut)
	}
	applyAdmission(t, rulesFile)
	waitPolicies(t, ns, 10*time.Second)
	adm := env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, "at-admission"))
	checkAnnotations(t, "created", adm, map[string]string{"a": "1", marker("configmaps"): "a,label:l"})

	if changes, code := diffChanges(t, rulesFile, ns); code != 0 || len(changes) > 0 {
		t.Errorf("diff with the rules in force: exit %d, changes %v; want 0 and none", code, changes)
	}

	// The rule goes: its policy with it, then the keys it set.
	replaceFile(t, rulesFile, "rules:\n"+probeRule(ns))
	applyAdmission(t, rulesFile)
	if policyExpression(t, "kube-annotator.r") != "" {
		t.Fatalf("kubectl apply --prune left the policy of the removed rule")
	}
	// Until the API server drops it, the policy would undo once's writes.
	waitPolicyGone(t, ns, "a", 10*time.Second)
	changes, code := diffChanges(t, rulesFile, ns)
	want := []string{"annotation a", "label l"}
	if code != 1 || !slices.Equal(changes["by-controller"], want) || !slices.Equal(changes["at-admission"], want) {
		t.Errorf("diff without the rule: exit %d, changes %v; want 1 and %v for both", code, changes, want)
	}
	// once -n keeps its record, a ConfigMap it examines and leaves alone, in ns.
	out, errOut, code := runCLI(t, "once", "--rules", rulesFile, "--kubeconfig", env.Kubeconfig, "-n", ns)
	if code != 0 || !hasRow(out, []string{"configmaps.v1", "3", "2", "0"}) {
		t.Errorf("once without the rule: exit %d, want 0 and 2 of 3 objects changed:\n%s%s", code, out, errOut)
	}
	for _, name := range []string{"by-controller", "at-admission"} {
		got := env.Get(t, h.ConfigMaps, ns, name)
		if len(got.GetAnnotations())+len(got.GetLabels()) > 0 {
			t.Errorf("%s after once: annotations %v, labels %v; want none", name, got.GetAnnotations(), got.GetLabels())
		}
	}
}
