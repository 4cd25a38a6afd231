package cli

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/explain"
	"github.com/kube-annotator/kube-annotator/pkg/fight"
)

// explain shows the last fight the controller reported on the object, from
// its Fighting events; without events it shows none, and when it cannot
// list them it says so.
func TestExplainShowsFight(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-1"}}
	event := func(manager string, at time.Time, series bool) corev1.Event {
		f := fight.Fight{Manager: manager, Keys: []fight.Key{{Kind: "annotation", Key: "team", Rule: "team"}}, Wait: time.Second}
		e := corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: manager, Namespace: "default"}, Reason: fight.Reason, Message: f.Note(),
			InvolvedObject: corev1.ObjectReference{UID: "u-1"}, EventTime: metav1.NewMicroTime(at.Add(-time.Hour))}
		if series {
			e.Series = &corev1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(at)}
		} else {
			e.EventTime = metav1.NewMicroTime(at)
		}
		return e
	}
	now := time.Now()
	events := func(items ...corev1.Event) *corev1.EventList {
		return &corev1.EventList{TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "v1"}, Items: items}
	}
	other := corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default"}, Reason: fight.Reason, Message: "not a fight's note",
		EventTime: metav1.NewMicroTime(now)}
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte("rules:\n- name: team\n  resources: [cm]\n  annotations: {team: a}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		events      *corev1.EventList // nil: listing them fails
		wantManager string
		wantOngoing bool
		wantText    string
	}{
		{"the last report, of a series", events(event("old", now.Add(-5*time.Minute), false), event("gitops", now.Add(-time.Minute), true), other),
			"gitops", true, "field manager \"gitops\" reverts what the rules set"},
		{"a report older than a fight goes on without one", events(event("gitops", now.Add(-fight.Quiet-fight.BackoffMax-time.Minute), false)),
			"gitops", false, "it has likely ended"},
		{"no fight", events(other), "", false, ""},
		{"events cannot be listed", nil, "", false, "Fight: unknown: list the object's events in default: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objects := map[string]any{"/api/v1/namespaces/default/configmaps/web": cm}
			if tc.events != nil {
				objects["/api/v1/namespaces/default/events"] = tc.events
			}
			srv := httptest.NewServer(&fakeAPIServer{objects: objects})
			t.Cleanup(srv.Close)
			stdout, stderr, code := invoke("kube-annotator", "explain", "cm/web", "--rules", path, "--server", srv.URL, "-o", "json")
			var x explain.Object
			if err := json.Unmarshal([]byte(stdout), &x); code != 0 || err != nil {
				t.Fatalf("exit %d, %v, stderr %q", code, err, stderr)
			}
			switch {
			case tc.wantManager == "" && x.Fight != nil:
				t.Errorf("fight %+v, want none", x.Fight)
			case tc.wantManager != "" && (x.Fight == nil || x.Fight.Manager != tc.wantManager || x.Fight.Ongoing != tc.wantOngoing || len(x.Fight.Keys) != 1):
				t.Errorf("fight %+v, want %s's, ongoing %v, over one key", x.Fight, tc.wantManager, tc.wantOngoing)
			}
			if (x.FightUnknown != "") != (tc.events == nil) {
				t.Errorf("fightUnknown %q, want it set only when events cannot be listed", x.FightUnknown)
			}
			text, _, _ := invoke("kube-annotator", "explain", "cm/web", "--rules", path, "--server", srv.URL)
			if strings.Contains(text, "Fight") != (tc.wantText != "") || !strings.Contains(text, tc.wantText) {
				t.Errorf("explain prints:\n%s\nwant it to say %q", text, tc.wantText)
			}
		})
	}
}
