package coverage

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/scan"
)

// configMap is a ConfigMap with labels.
func configMap(namespace, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

// Scan counts each key by state, by namespace when asked, lists the
// objects in the states asked for with explain's reason, and says whether
// everything is covered; Print writes the counts as a table.
func TestScan(t *testing.T) {
	const rules = "rules:\n- {name: team, resources: [configmaps], labels: {team: {fromNamespace: {label: team}, ifAbsent: true}}}\n"
	set := rulestest.Compile(t, rules, rulestest.ConfigMaps, rulestest.Namespaces)
	payments := map[string]string{"team": "payments"}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{rulestest.ConfigMaps.GVR: "ConfigMapList"},
		configMap("checkout", "web-1", nil), configMap("checkout", "api-1", payments), configMap("tools", "dns-1", nil))
	namespaces := map[string]*metav1.ObjectMeta{"checkout": {Name: "checkout", Labels: payments}, "tools": {Name: "tools"}}
	look := source.Namespaces(func(name string) (metav1.Object, bool) { ns, ok := namespaces[name]; return ns, ok })
	key := func(state string) reconcile.KeyState {
		return reconcile.KeyState{Rule: "team", Kind: "label", Key: "team", State: state}
	}
	tests := []struct {
		name       string
		opts       Options
		wantCounts []Count
		wantObjs   []Object
	}{
		{name: "the cluster", opts: Options{}, wantCounts: []Count{
			{KeyState: key("compliant"), Objects: 1}, {KeyState: key("pending"), Objects: 1}, {KeyState: key("source-missing"), Objects: 1}}},
		{name: "by namespace, listing source-missing", opts: Options{ByNamespace: true, States: []string{"source-missing"}}, wantCounts: []Count{
			{Namespace: "checkout", KeyState: key("compliant"), Objects: 1}, {Namespace: "checkout", KeyState: key("pending"), Objects: 1},
			{Namespace: "tools", KeyState: key("source-missing"), Objects: 1}},
			wantObjs: []Object{{Resource: "configmaps.v1", Namespace: "tools", Name: "dns-1", KeyState: key("source-missing"),
				Reason: `fromNamespace: namespace "tools" has no label "team"`}}},
		{name: "one namespace", opts: Options{Namespace: "checkout"}, wantCounts: []Count{
			{KeyState: key("compliant"), Objects: 1}, {KeyState: key("pending"), Objects: 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Look, tc.opts.Manager = look, reconcile.FieldManager
			r, err := Scan(context.Background(), dyn, set.SortedTargets(), tc.opts, &scan.Unset{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.Counts, tc.wantCounts) || !reflect.DeepEqual(r.Objects, tc.wantObjs) || r.Covered {
				t.Errorf("Scan = %+v, want counts %+v, objects %+v, not covered", r, tc.wantCounts, tc.wantObjs)
			}
		})
	}
	var out bytes.Buffer
	if err := Print(&out, Report{Counts: tests[0].wantCounts}, false); err != nil {
		t.Fatal(err)
	}
	want := "RULE  KIND   KEY   COMPLIANT  PENDING  FOREIGN  SOURCE-MISSING  INVALID  ERROR  OPTED-OUT  FIGHTING  UNRECORDED\n" +
		"team  label  team  1          1        0        1               0        0      0          0         0\n"
	if out.String() != want {
		t.Errorf("Print =\n%s\nwant\n%s", out.String(), want)
	}
	if err := CheckStates([]string{"pending", "done"}); err == nil || !strings.Contains(err.Error(), `"done"`) {
		t.Errorf("CheckStates(done) = %v, want an error naming it", err)
	}
	var progress bytes.Buffer
	examined, done := Progress(&progress)
	done()
	if examined != nil || progress.Len() > 0 {
		t.Errorf("Progress on a buffer, not a terminal: examined %v, wrote %q; want nothing", examined != nil, progress.String())
	}
}
