package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

var (
	pods  = rulestest.Pods.GVR
	nodes = rulestest.Nodes.GVR
)

const zoneLabel = "topology.kubernetes.io/zone"

// zoneRule sets the label zone of every Pod to its Node's zone.
const zoneRule = "rules:\n- {name: zone, resources: [pods], labels: {zone: {fromNode: {label: " + zoneLabel + "}, default: unknown}}}\n"

// node returns a Node with the zone label, unless zone is "".
func node(name, zone string) *unstructured.Unstructured {
	u := fixture.Object("Node", "", name, nil)
	if zone != "" {
		u.SetLabels(map[string]string{zoneLabel: zone})
	}
	return u
}

// podOn returns a Pod bound to the Node nodeName, or not scheduled when
// it is "".
func podOn(name, nodeName string) *unstructured.Unstructured {
	u := fixture.Object("Pod", "default", name, nil)
	if nodeName != "" {
		if err := unstructured.SetNestedField(u.Object, nodeName, "spec", "nodeName"); err != nil {
			panic(err)
		}
	}
	return u
}

// TestRunFromNode checks that Pods get their Node's label, or the default
// where it is missing; that they follow a relabelled Node, and a Pod its
// binding to one; and that Nodes are watched only while a rule reads them.
func TestRunFromNode(t *testing.T) {
	client := newClient(node("n1", "a"), node("n2", ""), podOn("p1", "n1"), podOn("p2", ""), podOn("p3", "n2"))
	_, ctx := ktesting.NewTestContext(t)
	c := newController(client, Options{})
	compile := func(content string) *rules.Set {
		return rulestest.Compile(t, content, rulestest.Pods, rulestest.ConfigMaps)
	}
	c.SetRules(ctx, compile(zoneRule))
	runController(t, ctx, c)
	zoneOf := func(name string) string {
		o, err := client.Tracker().Get(pods, "default", name)
		if err != nil {
			t.Fatal(err)
		}
		return o.(*unstructured.Unstructured).GetLabels()["zone"]
	}
	want := func(what string, zones map[string]string) {
		t.Helper()
		testutil.WaitFor(t, 10*time.Second, what, func() bool {
			for p, z := range zones {
				if zoneOf(p) != z {
					return false
				}
			}
			return true
		})
	}
	want("the Node's zone, or the default", map[string]string{"p1": "a", "p2": "unknown", "p3": "unknown"})

	for _, n := range []*unstructured.Unstructured{node("n1", "b"), node("n2", "c")} {
		n.SetResourceVersion("2")
		if err := client.Tracker().Update(nodes, n, ""); err != nil {
			t.Fatal(err)
		}
	}
	want("the relabelled Nodes' zones", map[string]string{"p1": "b", "p2": "unknown", "p3": "c"})

	bound, err := client.Tracker().Get(pods, "default", "p2")
	if err != nil {
		t.Fatal(err)
	}
	u := bound.(*unstructured.Unstructured).DeepCopy()
	if err := unstructured.SetNestedField(u.Object, "n1", "spec", "nodeName"); err != nil {
		t.Fatal(err)
	}
	u.SetResourceVersion("200")
	if err := client.Tracker().Update(pods, u, "default"); err != nil {
		t.Fatal(err)
	}
	want("the zone of the Node the Pod is bound to", map[string]string{"p2": "b"})

	if err := client.Tracker().Delete(nodes, "", "n2"); err != nil {
		t.Fatal(err)
	}
	want("the default once the Node is gone", map[string]string{"p3": "unknown"})

	c.mu.RLock()
	running := c.sources[source.Node] != nil
	c.mu.RUnlock()
	if !running {
		t.Errorf("no informer of Nodes while a rule reads them")
	}
	c.SetRules(ctx, compile("rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n"))
	c.mu.RLock()
	left := c.sources[source.Node] != nil
	c.mu.RUnlock()
	if left {
		t.Errorf("an informer of Nodes once no rule reads them, want none")
	}
}
