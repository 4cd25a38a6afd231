package scan

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Sources lists the objects of each source once, and only when a rule
// needs them: the namespaces for namespace selectors, fromNamespace and
// the opt-out of a namespaced resource's objects, the Nodes for fromNode;
// the Lookup finds them by source.
func TestSources(t *testing.T) {
	objs := []runtime.Object{
		object("Namespace", "", "ns-a", nil, map[string]string{"team": "a"}),
		object("Namespace", "", "bare", nil, nil),
		object("Namespace", "", "quiet", map[string]string{rulefile.IgnoreAnnotation: "true"}, nil),
		object("Node", "", "n1", nil, map[string]string{"zone": "eu-1a"}),
	}
	listFailed := errors.New("list failed")
	tests := []struct {
		name       string
		rules      string
		react      k8stesting.ReactionFunc
		wantLists  int
		namespaces bool // the namespaces are found
		nodes      bool // the Nodes are found
		wantErr    error
	}{
		{name: "not needed", rules: "rules:\n- {name: r, resources: [namespaces], annotations: {a: '1'}}\n"},
		{name: "opt-outs", rules: "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n", wantLists: 1, namespaces: true},
		{name: "namespace selector", rules: "rules:\n- {name: r, resources: [configmaps], namespaceSelector: team=a, annotations: {a: '1'}}\n",
			wantLists: 1, namespaces: true},
		{name: "fromNode", rules: "rules:\n- {name: r, resources: [pods], labels: {zone: {fromNode: {label: zone}}}}\n",
			wantLists: 2, namespaces: true, nodes: true},
		{name: "list error", rules: "rules:\n- {name: r, resources: [configmaps], namespaceSelector: team=a, annotations: {a: '1'}}\n",
			react:     func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, listFailed },
			wantLists: 1, wantErr: listFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newClient(objs...)
			if tc.react != nil {
				client.PrependReactor("list", "namespaces", tc.react)
			}
			got, err := Sources(t.Context(), client, rulestest.Compile(t, tc.rules, served...))
			if !errors.Is(err, tc.wantErr) || (err != nil && !strings.HasPrefix(err.Error(), "list namespaces for ")) {
				t.Errorf("Sources() error = %v, want %v, with context", err, tc.wantErr)
			}
			if n := len(client.Actions()); n != tc.wantLists {
				t.Errorf("%d requests, want %d", n, tc.wantLists)
			}
			if err != nil {
				return
			}
			for ns, want := range map[string]labels.Set{"ns-a": {"team": "a"}, "bare": {}, "unknown": nil} {
				m, ok := got.Find(source.Namespace, "", ns)
				var l labels.Set
				if ok {
					l = m.GetLabels()
				}
				if !tc.namespaces {
					want = nil
				}
				if ok != (want != nil) || !reflect.DeepEqual(l, want) && len(l)+len(want) > 0 {
					t.Errorf("labels of %s = %v, %v; want %v, %v", ns, l, ok, want, want != nil)
				}
			}
			if m, ok := got.Find(source.Namespace, "", "quiet"); ok != tc.namespaces || ok && !rules.OptsOut(m.GetAnnotations()) {
				t.Errorf("namespace quiet found %v, opting out; want found %v", ok, tc.namespaces)
			}
			if _, ok := got.Find(source.Node, "", "n1"); ok != tc.nodes {
				t.Errorf("Node n1 found %v, want %v", ok, tc.nodes)
			}
		})
	}
}

// TestSourcesForNamespaceObject checks that a rule whose CEL reads
// namespaceObject, with no namespaceSelector or fromNamespace, is decided
// on the namespace listed by Sources, as run decides it from its
// namespace informer.
func TestSourcesForNamespaceObject(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {team: {cel: 'namespaceObject.metadata.labels.team'}}}\n", served...)
	client := newClient(object("Namespace", "", "ns-a", nil, map[string]string{"team": "a"}), cm("ns-a", "x", nil))
	look, err := Sources(t.Context(), client, set)
	if err != nil {
		t.Fatal(err)
	}
	var got []*Object
	err = Resource(t.Context(), client, set.Targets[configMaps], "", manager, look, new(Unset), func(_ *rules.Target, o *Object) error {
		if o != nil {
			got = append(got, o)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Changes) != 1 || got[0].Changes[0].Key != "team" || got[0].Changes[0].New == nil || *got[0].Changes[0].New != "a" {
		t.Errorf("pending = %s, want team set to a, read from namespace ns-a", fmt.Sprint(got))
	}
}
