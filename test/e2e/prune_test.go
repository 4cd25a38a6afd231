package e2e

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// Rules files of the prune tests: a rule on deployments and pods, the
// same rule without deployments, and a rule on something else entirely.
const (
	workloadsRules = `rules:
- name: workloads
  resources: [deployments, pods]
  annotations: {sample-controller: "True"}
`
	podsRules = `rules:
- name: workloads
  resources: [pods]
  annotations: {sample-controller: "True"}
`
	configMapsRules = `rules:
- name: settings
  resources: [configmaps]
  annotations: {sample-controller: "True"}
`
	// teamBRules are another team's, run as another field manager.
	teamBRules = `rules:
- name: team-b
  resources: [deployments, pods]
  annotations: {team-b/owner: "b"}
  labels: {team-b: "yes"}
`
)

// pruned is an object of the prune tests.
type pruned struct {
	gvr  schema.GroupVersionResource
	name string
}

var (
	web      = pruned{h.Deployments, "web"}
	webPod   = pruned{h.Pods, "web-pod"}
	settings = pruned{h.ConfigMaps, "settings"}
)

// seedPrune creates, in a new namespace, a Deployment, a Pod and a
// ConfigMap on which someone else set an annotation and a label, and
// returns the namespace.
func seedPrune(t *testing.T) string {
	t.Helper()
	ns := env.NewNamespace(t)
	env.Create(t, h.Deployments, ns, h.Deployment(t, ns, web.name, 0))
	env.Create(t, h.Pods, ns, h.Pod(t, ns, webPod.name))
	env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, settings.name))
	for _, o := range []pruned{web, webPod, settings} {
		userSet(t, o.gvr, ns, o.name, `{"metadata":{"annotations":{"user/note":"keep me","sample-controller-ish":"x"},"labels":{"team":"blue"}}}`)
	}
	return ns
}

// ourKeys are the keys the prune tests' rules set.
var ourKeys = []string{"sample-controller", "team-b/owner", "team-b"}

// othersKeys returns, per object of seedPrune, its annotations and labels
// without the keys the tests' rules set: what must never change.
func othersKeys(t *testing.T, ns string) map[string][2]map[string]string {
	t.Helper()
	out := map[string][2]map[string]string{}
	for _, o := range []pruned{web, webPod, settings} {
		a, l := metadataOf(t, o.gvr, ns, o.name)
		for _, k := range ourKeys {
			delete(a, k)
			delete(l, k)
		}
		out[o.gvr.Resource+"/"+o.name] = [2]map[string]string{a, l}
	}
	return out
}

// checkOthersKept fails the test if the keys others set changed since
// before.
func checkOthersKept(t *testing.T, ns string, before map[string][2]map[string]string) {
	t.Helper()
	if after := othersKeys(t, ns); !reflect.DeepEqual(after, before) {
		t.Errorf("keys set by others changed:\nbefore %v\nafter  %v", before, after)
	}
}

// waitKey waits until the object carries key (an annotation) or, when
// want is false, does not.
func waitKey(t *testing.T, timeout time.Duration, ns string, o pruned, key string, want bool) {
	t.Helper()
	what := key + " removed"
	if want {
		what = key + " set"
	}
	waitMetadata(t, timeout, o.gvr, ns, o.name, what, func(a, _ map[string]string) bool {
		_, ok := a[key]
		return ok == want
	})
}

// carriesKey reports whether the object carries the annotation key now.
func carriesKey(t *testing.T, ns string, o pruned, key string) bool {
	t.Helper()
	a, _ := metadataOf(t, o.gvr, ns, o.name)
	_, ok := a[key]
	return ok
}

// recordLines returns the lines of the record of manager in ns; nil when
// there is no record.
func recordLines(t *testing.T, ns, manager string) []string {
	t.Helper()
	u, err := env.Dynamic.Resource(h.ConfigMaps).Namespace(ns).Get(t.Context(), manager+"-resources", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	data, _ := u.Object["data"].(map[string]any)
	if data["fieldManager"] != manager || u.GetLabels()["app.kubernetes.io/managed-by"] != "kube-annotator" {
		t.Errorf("record of %s: data %v, labels %v; want it labelled and naming its field manager", manager, data, u.GetLabels())
	}
	text, _ := data["resources"].(string)
	return strings.Fields(strings.ReplaceAll(strings.ReplaceAll(text, " -n ", "@"), "\n", " "))
}

// waitRecord waits until the record of manager in ns lists exactly want
// (lines as "resource@namespace").
func waitRecord(t *testing.T, timeout time.Duration, ns, manager string, want ...string) {
	t.Helper()
	var got []string
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		got = recordLines(t, ns, manager)
		return slices.Equal(got, want), nil
	})
	if err != nil {
		t.Fatalf("record %s/%s-resources lists %q after %v, want %q", ns, manager, got, timeout, want)
	}
}

// annotatedThenStopped runs the controller in ns, with its record there,
// on a rules file of workloadsRules until the Deployment and the Pod carry
// the key, then stops it; it returns the file and the arguments it ran
// with.
func annotatedThenStopped(t *testing.T, ns string) (rulesFile string, args []string) {
	t.Helper()
	rulesFile = writeFile(t, "rules.yaml", workloadsRules)
	args = []string{"--rules", rulesFile, "-n", ns, "--record-namespace", ns}
	p := startRun(t, args...)
	waitKey(t, 15*time.Second, ns, web, "sample-controller", true)
	waitKey(t, 5*time.Second, ns, webPod, "sample-controller", true)
	p.Terminate(t)
	return rulesFile, args
}

// prunePending reads p's kube_annotator_prune_pending for resource and
// reason.
func prunePending(t *testing.T, p *proc.Process, resource, reason string) float64 {
	t.Helper()
	return promtext.MetricValue(p.Scrape(t), "kube_annotator_prune_pending", map[string]string{"resource": resource, "reason": reason})
}

// Removing a resource from a rule, or replacing the whole rules file,
// while the controller runs: the keys it set there go within 10 s, the
// resource leaves the record, and its informer stops.
func TestPruneWhileRunning(t *testing.T) {
	ns := seedPrune(t)
	before := othersKeys(t, ns)
	rulesFile := writeFile(t, "rules.yaml", workloadsRules)
	p := startRun(t, "--rules", rulesFile, "-n", ns, "--record-namespace", ns)
	waitKey(t, 15*time.Second, ns, web, "sample-controller", true)
	waitKey(t, 5*time.Second, ns, webPod, "sample-controller", true)
	waitRecord(t, 5*time.Second, ns, "kube-annotator", "deployments.apps@"+ns, "pods@"+ns)

	t.Run("a resource removed from a rule", func(t *testing.T) {
		replaceFile(t, rulesFile, podsRules)
		waitKey(t, 10*time.Second, ns, web, "sample-controller", false)
		waitRecord(t, 5*time.Second, ns, "kube-annotator", "pods@"+ns)
		p.WaitMetric(t, 5*time.Second, "kube_annotator_informers", 1)
		if !carriesKey(t, ns, webPod, "sample-controller") {
			t.Errorf("the Pod lost the key its rule still sets")
		}
		if got := prunePending(t, p, "deployments.apps", "Pruning"); got != 0 {
			t.Errorf("prune_pending{deployments.apps,Pruning} = %v after the prune, want 0", got)
		}
	})

	t.Run("the whole rules file replaced", func(t *testing.T) {
		replaceFile(t, rulesFile, configMapsRules)
		waitKey(t, 10*time.Second, ns, webPod, "sample-controller", false)
		waitKey(t, 5*time.Second, ns, settings, "sample-controller", true)
		waitRecord(t, 5*time.Second, ns, "kube-annotator", "configmaps@"+ns)
		p.WaitMetric(t, 5*time.Second, "kube_annotator_informers", 1)
	})

	t.Run("keys of others are byte-identical", func(t *testing.T) { checkOthersKept(t, ns, before) })
}

// The same edits made while the controller is stopped are pruned when it
// starts again.
func TestPruneWhileStopped(t *testing.T) {
	ns := seedPrune(t)
	before := othersKeys(t, ns)
	rulesFile, args := annotatedThenStopped(t, ns)

	t.Run("a resource removed from a rule", func(t *testing.T) {
		replaceFile(t, rulesFile, podsRules)
		p := startRun(t, args...)
		waitKey(t, 15*time.Second, ns, web, "sample-controller", false)
		waitRecord(t, 5*time.Second, ns, "kube-annotator", "pods@"+ns)
		p.WaitMetric(t, 5*time.Second, "kube_annotator_informers", 1)
		p.Terminate(t)
	})

	t.Run("the whole rules file replaced", func(t *testing.T) {
		replaceFile(t, rulesFile, configMapsRules)
		p := startRun(t, args...)
		waitKey(t, 15*time.Second, ns, webPod, "sample-controller", false)
		waitKey(t, 5*time.Second, ns, settings, "sample-controller", true)
		waitRecord(t, 5*time.Second, ns, "kube-annotator", "configmaps@"+ns)
		p.Terminate(t)
	})

	t.Run("keys of others are byte-identical", func(t *testing.T) { checkOthersKept(t, ns, before) })
}

// Two controllers with their own field manager and rules file on the same
// objects: each prunes only its own keys, each in its own record.
func TestPruneTwoFieldManagers(t *testing.T) {
	ns := seedPrune(t)
	before := othersKeys(t, ns)
	fileA := writeFile(t, "a.yaml", workloadsRules)
	fileB := writeFile(t, "b.yaml", teamBRules)
	startRun(t, "--rules", fileA, "-n", ns, "--record-namespace", ns)
	startRun(t, "--rules", fileB, "-n", ns, "--record-namespace", ns, "--field-manager", "team-b")
	for _, o := range []pruned{web, webPod} {
		waitKey(t, 15*time.Second, ns, o, "sample-controller", true)
		waitKey(t, 5*time.Second, ns, o, "team-b/owner", true)
	}
	waitRecord(t, 5*time.Second, ns, "team-b", "deployments.apps@"+ns, "pods@"+ns)
	waitRecord(t, 5*time.Second, ns, "kube-annotator", "deployments.apps@"+ns, "pods@"+ns)

	replaceFile(t, fileA, podsRules)
	waitKey(t, 10*time.Second, ns, web, "sample-controller", false)
	replaceFile(t, fileB, strings.Replace(teamBRules, "[deployments, pods]", "[deployments]", 1))
	waitMetadata(t, 10*time.Second, h.Pods, ns, webPod.name, "team-b's keys removed", func(a, l map[string]string) bool {
		_, ann := a["team-b/owner"]
		_, lbl := l["team-b"]
		return !ann && !lbl
	})
	waitRecord(t, 5*time.Second, ns, "kube-annotator", "pods@"+ns)
	waitRecord(t, 5*time.Second, ns, "team-b", "deployments.apps@"+ns)
	env.Quiet(t, 2*time.Second, "deployments", "pods") // both prunes done: nothing else may go
	a, l := metadataOf(t, h.Deployments, ns, web.name)
	if a["team-b/owner"] != "b" || l["team-b"] != "yes" {
		t.Errorf("the Deployment lost team-b's keys when kube-annotator pruned it: %v %v", a, l)
	}
	if a, _ := metadataOf(t, h.Pods, ns, webPod.name); a["sample-controller"] != "True" {
		t.Errorf("the Pod lost kube-annotator's key when team-b pruned it: %v", a)
	}
	checkOthersKept(t, ns, before)

	t.Run("another field manager's record is refused", func(t *testing.T) {
		clash := h.Object("v1", "ConfigMap", ns, "clash-resources")
		clash.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "kube-annotator"})
		clash.Object["data"] = map[string]any{"fieldManager": "someone", "resources": "configmaps -n " + ns + "\n"}
		env.Create(t, h.ConfigMaps, ns, clash)
		_, stderr, code := runCLI(t, "once", "--rules", fileA, "--kubeconfig", env.Kubeconfig, "-n", ns,
			"--record-namespace", ns, "--field-manager", "clash")
		if want := `data.fieldManager is "someone", not "clash": refusing to use another field manager's record`; code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("once with another field manager's record: exit %d, stderr %q; want 1 and %q", code, stderr, want)
		}
	})
}
