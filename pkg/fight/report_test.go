package fight

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNoteRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		f    Fight
		want string
	}{
		{"one annotation",
			Fight{Manager: "argocd-controller", Managers: []string{"argocd-controller"}, Keys: []Key{{"annotation", "team", "team"}}, Wait: time.Second},
			`Field manager "argocd-controller" reverts annotation team (rule team): more than 3 writes in 1m0s; the writes back off, the next waits 1s`},
		{"keys of two rules and one of none; a manager with quotes and spaces",
			Fight{Manager: `my "tool" v2`, Managers: []string{`my "tool" v2`}, Keys: []Key{{"annotation", "example.com/a", "a"}, {"label", "tier", ""}, {"label", "x.io/y", "b"}}, Wait: 4 * time.Minute},
			`Field manager "my \"tool\" v2" reverts annotation example.com/a (rule a), label tier (no rule), label x.io/y (rule b): more than 3 writes in 1m0s; the writes back off, the next waits 4m0s`},
		{"two managers in turn, one with a comma and quotes",
			Fight{Manager: "flux", Managers: []string{"flux", `a, "b"`}, Keys: []Key{{"label", "tier", "web"}}, Wait: 2 * time.Second},
			`Field managers "flux", "a, \"b\"" revert label tier (rule web): more than 3 writes in 1m0s; the writes back off, the next waits 2s`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f.Note(); got != tc.want {
				t.Fatalf("Note() =\n%s\nwant\n%s", got, tc.want)
			}
			got, ok := ParseNote(tc.want)
			if !ok || !reflect.DeepEqual(got, tc.f) {
				t.Errorf("ParseNote() = %+v, %v; want %+v", got, ok, tc.f)
			}
		})
	}
	for _, note := range []string{"", "Changed annotations team", `Field manager "x" reverts annotation a (rule r)`, `Field managers "x" revert annotation a (rule r): more than 3 writes in 1m0s; the writes back off, the next waits 1s`,
		`Field manager x reverts annotation a (rule r): more than 3 writes in 1m0s; the writes back off, the next waits 1s`} {
		if f, ok := ParseNote(note); ok {
			t.Errorf("ParseNote(%q) = %+v, want not a fight", note, f)
		}
	}
}

func TestRules(t *testing.T) {
	f := Fight{Keys: []Key{{"label", "b", "web"}, {"annotation", "a", "api"}, {"annotation", "c", "web"}}}
	if got := f.Rules(); !reflect.DeepEqual(got, []string{"api", "web"}) {
		t.Errorf("Rules() = %v", got)
	}
}

// entry is a managedFields entry of manager, changed at second at, owning
// the annotations anns and labels lbls.
func entry(manager string, at int64, anns, lbls []string) metav1.ManagedFieldsEntry {
	set := func(keys []string) map[string]any {
		m := map[string]any{}
		for _, k := range keys {
			m["f:"+k] = map[string]any{}
		}
		return m
	}
	raw, _ := json.Marshal(map[string]any{"f:metadata": map[string]any{"f:annotations": set(anns), "f:labels": set(lbls)}})
	tm := metav1.NewTime(time.Unix(at, 0))
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}, Time: &tm}
}

func TestOtherManager(t *testing.T) {
	const ours = "kube-annotator"
	team := []Key{{"annotation", "team", "r"}}
	tests := []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		keys    []Key
		want    string
	}{
		{"the owner of the key", []metav1.ManagedFieldsEntry{entry(ours, 9, []string{"other"}, nil), entry("gitops", 5, []string{"team"}, nil), entry("kubectl", 8, []string{"x"}, nil)}, team, "gitops"},
		{"of two owners, the later", []metav1.ManagedFieldsEntry{entry("a", 5, []string{"team"}, nil), entry("b", 7, []string{"team"}, nil)}, team, "b"},
		{"a label is looked up among labels", []metav1.ManagedFieldsEntry{entry("a", 9, []string{"tier"}, nil), entry("b", 1, nil, []string{"tier"})}, []Key{{"label", "tier", "r"}}, "b"},
		{"ours is never the other", []metav1.ManagedFieldsEntry{entry(ours, 9, []string{"team"}, nil), entry("kubectl", 2, []string{"x"}, nil)}, team, "kubectl"},
		{"nobody owns the key (deleted): the last other to change the object", []metav1.ManagedFieldsEntry{entry("a", 3, []string{"x"}, nil), entry("b", 6, nil, []string{"y"}), entry(ours, 9, []string{"z"}, nil)}, team, "b"},
		{"only ours", []metav1.ManagedFieldsEntry{entry(ours, 9, []string{"team"}, nil)}, team, Unknown},
		{"no managedFields", nil, team, Unknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := OtherManager(tc.entries, ours, tc.keys); got != tc.want {
				t.Errorf("OtherManager() = %q, want %q", got, tc.want)
			}
		})
	}
}
