package scan

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

// visited is what a visit saw: the pending object's name and patch, or
// nothing for an object that needs no change.
type visited struct{ namespace, name, patch string }

func TestResource(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n- {name: r, resources: [configmaps, namespaces], annotations: {a: '1'}}\n", served...)
	want := map[string]string{"a": "1"}
	objs := []runtime.Object{
		cm("ns1", "missing", nil),
		cm("ns1", "right", want),
		cm("ns2", "wrong", map[string]string{"a": "0"}),
		object("Namespace", "", "ns1", nil, nil),
		object("Namespace", "", "ns2", want, nil),
	}
	const patchA = `application/merge-patch+json {"metadata":{"annotations":{"a":"1"}}}`
	tests := []struct {
		name       string
		gvr        schema.GroupVersionResource
		namespace  string
		wantListNS string
		wantVisits []visited
	}{
		{"every namespace", configMaps, "", "", []visited{{"ns1", "missing", patchA}, {}, {"ns2", "wrong", patchA}}},
		{"one namespace", configMaps, "ns2", "ns2", []visited{{"ns2", "wrong", patchA}}},
		{"empty namespace", configMaps, "ns3", "ns3", nil},
		{"cluster-scoped ignores the namespace", namespaces, "ns2", "", []visited{{"", "ns1", patchA}, {}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newClient(objs...)
			tg := set.Targets[tc.gvr]
			var visits []visited
			err := Resource(t.Context(), client, tg, tc.namespace, manager, nil, new(Unset), func(got *rules.Target, o *Object) error {
				if got != tg {
					t.Errorf("visit got target %v, want the one listed", got.GVR)
				}
				v := visited{}
				if o != nil {
					v = visited{o.Namespace, o.Name, fmt.Sprintf("%s %s", o.Requests[0].Type, o.Requests[0].Body)}
				}
				visits = append(visits, v)
				return nil
			})
			if err != nil {
				t.Fatalf("Resource() error = %v", err)
			}
			if !slices.Equal(visits, tc.wantVisits) {
				t.Errorf("visits = %v, want %v", visits, tc.wantVisits)
			}
			checkOnlyLists(t, client, tc.gvr, tc.wantListNS)
		})
	}
}

// checkOnlyLists fails unless client received only list requests, of gvr
// in namespace ns, for every object.
func checkOnlyLists(t *testing.T, client *dynamicfake.FakeDynamicClient, gvr schema.GroupVersionResource, ns string) {
	t.Helper()
	actions := client.Actions()
	if len(actions) == 0 {
		t.Fatal("no requests, want a list")
	}
	for _, a := range actions {
		if a.GetVerb() != "list" || a.GetResource() != gvr || a.GetNamespace() != ns {
			t.Errorf("request %s %v in namespace %q, want only lists of %v in %q",
				a.GetVerb(), a.GetResource(), a.GetNamespace(), gvr, ns)
		}
		if l, ok := a.(k8stesting.ListAction); ok && !l.GetListRestrictions().Labels.Empty() {
			t.Errorf("list with label selector %q, want every object", l.GetListRestrictions().Labels)
		}
	}
}

func TestResourceErrors(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n", served...)
	stop := errors.New("stop")
	listFailed := errors.New("list failed")
	tests := []struct {
		name       string
		react      k8stesting.ReactionFunc
		visitErr   error
		wantErr    error
		wantVisits int
	}{
		{name: "visit error stops the scan", visitErr: stop, wantErr: stop, wantVisits: 1},
		{name: "list error", react: func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, listFailed },
			wantErr: listFailed, wantVisits: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newClient(cm("ns", "a", nil), cm("ns", "b", nil))
			if tc.react != nil {
				client.PrependReactor("list", "configmaps", tc.react)
			}
			visits := 0
			err := Resource(context.Background(), client, set.Targets[configMaps], "", manager, nil, new(Unset),
				func(*rules.Target, *Object) error { visits++; return tc.visitErr })
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("Resource() error = %v, want %v", err, tc.wantErr)
			}
			if visits != tc.wantVisits {
				t.Errorf("%d visits, want %d", visits, tc.wantVisits)
			}
		})
	}
}

// TestUnsetWarnings checks that Resource counts, by rule and reason, each
// object on which a rule cannot compute a key once, and that the warnings
// say how many and what happens to the keys.
func TestUnsetWarnings(t *testing.T) {
	set := rulestest.Compile(t, "rules:\n"+
		"- {name: color, resources: [configmaps], annotations: {c: {cel: 'object.data.color'}, d: {cel: 'object.data.shade'}}}\n"+
		"- {name: owner, resources: [configmaps], annotations: {o: {jsonPath: '{.data.owner}'}}}\n", served...)
	withData := func(name string, data map[string]any) *unstructured.Unstructured {
		u := cm("ns", name, nil)
		u.Object["data"] = data
		return u
	}
	client := newClient(withData("a", nil), withData("b", map[string]any{"color": "red", "shade": "dark"}),
		withData("c", map[string]any{"owner": "me"}), withData("d", map[string]any{"color": "a b", "shade": "x", "owner": "me"}))
	var unset Unset
	if err := Resource(t.Context(), client, set.Targets[configMaps], "", manager, nil, &unset, func(*rules.Target, *Object) error { return nil }); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"rule color: 2 objects: error (its expression failed; a value an object has is kept; explain shows why)",
		"rule owner: 2 objects: source-missing (the field or object it reads is absent, and the rule gives no default; explain shows why)",
	}
	if got := unset.Warnings(); !reflect.DeepEqual(got, want) {
		t.Errorf("Warnings() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
