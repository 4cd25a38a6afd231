package reports

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

var pods = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// verdict is the verdict on a Pod with pass keys as wanted and the
// findings given.
func verdict(pass int, findings ...Finding) Verdict {
	return Verdict{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, UID: "uid", Pass: pass, Findings: findings}
}

var missing = Finding{Rule: "team", Kind: "label", Key: "team", State: reconcile.StateSourceMissing, Why: `namespace "tools" has no label "team"`}

// Count sorts key states into passed, skipped and failing, with the
// reason of a failing one.
func TestVerdictCount(t *testing.T) {
	var v Verdict
	d := &reconcile.Decision{Evaluation: &rules.Evaluation{}}
	for _, st := range reconcile.States {
		d.Evaluation.Problems = append(d.Evaluation.Problems, "r: "+st+": why "+st)
	}
	for _, st := range reconcile.States {
		v.Count(reconcile.KeyState{Rule: "r", Kind: "label", Key: st, State: st}, d)
	}
	// opted-out is skipped, five states fail, the others pass.
	if pass := len(reconcile.States) - 6; v.Pass != pass || v.Skip != 1 || len(v.Findings) != 5 {
		t.Fatalf("pass %d skip %d findings %v; want %d, 1, 5", v.Pass, v.Skip, v.Findings, pass)
	}
	for _, f := range v.Findings {
		if !Failing(f.State) || f.Why != "why "+f.Key {
			t.Errorf("finding %+v", f)
		}
	}
}

// build holds the summary of every key and the findings of the rules in
// force, capped, with the number left out.
func TestBuild(t *testing.T) {
	other := Finding{Rule: "gone", Kind: "label", Key: "x", State: reconcile.StatePending}
	objs := []object{
		{objectKey{"pods", "", "b"}, verdict(1, missing, other)},
		{objectKey{"pods", "", "a"}, verdict(2, missing)},
		{objectKey{"pods", "", "c"}, verdict(3)},
	}
	for _, tc := range []struct {
		name      string
		max       int
		rules     map[string]bool
		wantNames []string
		want      Summary
		omitted   string
	}{
		{"all rules", 10, nil, []string{"a", "b", "b"}, Summary{Pass: 6, Fail: 3}, ""},
		{"rule gone", 10, map[string]bool{"team": true}, []string{"a", "b"}, Summary{Pass: 6, Fail: 2}, ""},
		{"capped", 1, nil, []string{"a"}, Summary{Pass: 6, Fail: 3}, "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sn := snapshot{namespace: "tools", objects: append([]object(nil), objs...), rules: tc.rules}
			rep, ok := build(sn, "kube-annotator", tc.max)
			if !ok || rep.Summary != tc.want || rep.Metadata.Annotations[OmittedAnnotation] != tc.omitted {
				t.Fatalf("summary %+v, annotations %v; want %+v, omitted %q", rep.Summary, rep.Metadata.Annotations, tc.want, tc.omitted)
			}
			var names []string
			for _, r := range rep.Results {
				names = append(names, r.Resources[0].Name)
			}
			if strings.Join(names, ",") != strings.Join(tc.wantNames, ",") {
				t.Errorf("results of %v, want %v", names, tc.wantNames)
			}
			r := rep.Results[0]
			if r.Source != Source || r.Policy != "team" || r.Rule != "team" || r.Result != ResultFail ||
				r.Properties["reason"] != missing.Why || r.Properties["state"] != missing.State || r.Resources[0].Kind != "Pod" {
				t.Errorf("result %+v", r)
			}
		})
	}
	if _, ok := build(snapshot{namespace: "x"}, "n", 1); ok {
		t.Error("an empty report reports something")
	}
	if rep, _ := build(snapshot{objects: objs[2:]}, "n", 1); rep.Kind != "ClusterReport" || rep.Metadata.Namespace != "" {
		t.Errorf("cluster report %+v", rep.Metadata)
	}
}

// recorder is a dynamic client that records the writes of reports.
type recorder struct {
	*dynamicfake.FakeDynamicClient
	writes []string // "apply tools" or "delete tools"
	last   map[string]Report
}

func newRecorder(existing ...runtime.Object) *recorder {
	lists := map[schema.GroupVersionResource]string{ReportResource: "ReportList", ClusterReportResource: "ClusterReportList"}
	r := &recorder{FakeDynamicClient: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, existing...), last: map[string]Report{}}
	r.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		var rep Report
		if err := json.Unmarshal(p.GetPatch(), &rep); err != nil {
			return true, nil, err
		}
		r.writes = append(r.writes, "apply "+p.GetNamespace())
		r.last[p.GetNamespace()] = rep
		return true, &unstructured.Unstructured{}, nil
	})
	r.PrependReactor("delete", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r.writes = append(r.writes, "delete "+a.GetNamespace())
		return true, nil, nil
	})
	return r
}

// The Writer writes a report once its caches have synced, only when it
// changed, and deletes it when nothing is left to report; a report found
// at start is rewritten or deleted.
func TestWriterLifecycle(t *testing.T) {
	found := &unstructured.Unstructured{}
	found.SetAPIVersion("openreports.io/v1alpha1")
	found.SetKind("Report")
	found.SetNamespace("old")
	found.SetName("kube-annotator")
	found.SetLabels(map[string]string{ManagedByLabel: ManagedBy})
	found.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kube-annotator"}})
	client := newRecorder(found)
	store := NewStore()
	synced := false
	w := NewWriter(client, store, Options{FieldManager: "kube-annotator", Name: "kube-annotator", Interval: time.Hour, MaxResults: 10, Synced: func() bool { return synced }})
	ctx := context.Background()
	if err := w.adopt(ctx); err != nil {
		t.Fatal(err)
	}
	web := Key{pods, "tools", "web"}
	steps := []struct {
		name string
		do   func()
		want []string
	}{
		{"not synced", func() { store.Record(web, verdict(0, missing)) }, nil},
		{"synced", func() { synced = true }, []string{"delete old", "apply tools"}},
		{"steady", func() {}, nil},
		{"same verdict", func() { store.Record(web, verdict(0, missing)) }, nil},
		{"changed and back", func() { store.Record(web, verdict(1)); store.Record(web, verdict(0, missing)) }, nil},
		{"compliant", func() { store.Record(web, verdict(1)) }, []string{"apply tools"}},
		{"cluster-scoped", func() { store.Record(Key{Name: "n1"}, verdict(0, missing)) }, []string{"apply "}},
		// The ClusterReport reports only a rule gone; tools' summary is as written.
		{"rule gone", func() { store.SetRules([]string{"other"}) }, []string{"delete "}},
		{"gone", func() { store.Record(web, Verdict{}) }, []string{"delete tools"}},
		{"resource gone", func() { store.ForgetResource("", "") }, nil},
		{"nothing left", func() {}, nil},
	}
	for _, s := range steps {
		client.writes = nil
		s.do()
		w.Flush(ctx)
		if strings.Join(client.writes, ",") != strings.Join(s.want, ",") {
			t.Errorf("%s: writes %q, want %q", s.name, client.writes, s.want)
		}
	}
	if n := store.Len(); n != 0 {
		t.Errorf("store holds %d objects, want 0", n)
	}
	if rep := client.last["tools"]; rep.Summary != (Summary{Pass: 1}) || len(rep.Results) != 0 {
		t.Errorf("last report of tools %+v", rep)
	}
}

// Cleanup deletes the reports the field manager wrote, and no other.
func TestCleanup(t *testing.T) {
	report := func(ns, manager string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("openreports.io/v1alpha1")
		u.SetKind("Report")
		u.SetNamespace(ns)
		u.SetName("r")
		u.SetLabels(map[string]string{ManagedByLabel: ManagedBy})
		u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: manager}})
		return u
	}
	client := newRecorder(report("a", "kube-annotator"), report("b", "other"))
	if err := Cleanup(context.Background(), client, "kube-annotator"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(client.writes, ",") != "delete a" {
		t.Errorf("writes %q, want delete a", client.writes)
	}
}

// On a server that does not serve the reports' API, a flush sends one
// request, and the reports are written once it does.
func TestWriterAPINotServed(t *testing.T) {
	client := newRecorder()
	served := false
	client.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if served {
			return false, nil, nil
		}
		client.writes = append(client.writes, "refused "+a.GetNamespace())
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "openreports.io", Resource: "reports"}, "kube-annotator")
	})
	store := NewStore()
	w := NewWriter(client, store, Options{FieldManager: "m", Name: "kube-annotator", Interval: time.Hour, MaxResults: 10, Synced: func() bool { return true }})
	for _, ns := range []string{"a", "b", "c"} {
		store.Record(Key{pods, ns, "p"}, verdict(0, missing))
	}
	w.Flush(context.Background())
	w.Flush(context.Background())
	if strings.Join(client.writes, ",") != "refused a,refused a" {
		t.Errorf("writes %q, want one refused request per flush", client.writes)
	}
	served, client.writes = true, nil
	w.Flush(context.Background())
	if strings.Join(client.writes, ",") != "apply a,apply b,apply c" {
		t.Errorf("writes once served %q, want every report applied", client.writes)
	}
}
