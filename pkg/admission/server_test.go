package admission

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestServerNote(t *testing.T) {
	v1 := func(names ...string) *metav1.APIResourceList {
		l := &metav1.APIResourceList{GroupVersion: "admissionregistration.k8s.io/v1"}
		for _, n := range names {
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: n})
		}
		return l
	}
	beta := &metav1.APIResourceList{GroupVersion: "admissionregistration.k8s.io/v1beta1",
		APIResources: []metav1.APIResource{{Name: "mutatingadmissionpolicies"}}}
	for _, tc := range []struct {
		name      string
		resources []*metav1.APIResourceList
		version   string
		fail      error
		want      []string // in the note; none: no note
		wantErr   bool
	}{
		{name: "served", resources: []*metav1.APIResourceList{v1("validatingadmissionpolicies", "mutatingadmissionpolicies")}, version: "v1.37.2"},
		{name: "1.35: only validating policies in v1", resources: []*metav1.APIResourceList{v1("validatingadmissionpolicies")}, version: "v1.35.4",
			want: []string{"Kubernetes 1.36 and later", "this API server (v1.35.4) does not serve it", "run --admission-policies leaves every rule to the controller"}},
		{name: "v1beta1 with the gate on is not enough", resources: []*metav1.APIResourceList{v1("validatingadmissionpolicies"), beta}, version: "v1.35.4",
			want: []string{"admissionregistration.k8s.io/v1,", "only v1beta1"}},
		{name: "group version not served, version unknown", version: "?", want: []string{"this API server does not serve it"}},
		{name: "discovery fails", fail: errors.New("connection refused"), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: tc.resources}}
			switch tc.version {
			case "?":
				dc.AddReactor("get", "version", func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, errors.New("forbidden") })
			case "":
			default:
				dc.FakedServerVersion = &version.Info{GitVersion: tc.version}
			}
			if tc.fail != nil {
				dc.AddReactor("get", "resource", func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, tc.fail })
			}
			note, err := ServerNote(context.Background(), dc, "run --admission-policies")
			if (err != nil) != tc.wantErr {
				t.Fatalf("ServerNote() error %v, want error %v", err, tc.wantErr)
			}
			if len(tc.want) == 0 && note != "" {
				t.Errorf("ServerNote() = %q, want none", note)
			}
			for _, w := range tc.want {
				if !strings.Contains(note, w) {
					t.Errorf("ServerNote() = %q, want it to contain %q", note, w)
				}
			}
			if n := strings.Count(note, "\n"); note != "" && n != 1 {
				t.Errorf("ServerNote() has %d lines, want 2:\n%s", n+1, note)
			}
		})
	}
}

// Told no setting, the note says what the controller does without naming
// how it is asked to keep the policies.
func TestServerNoteUnnamed(t *testing.T) {
	dc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}, FakedServerVersion: &version.Info{GitVersion: "v1.35.4"}}
	note, err := ServerNote(context.Background(), dc, "")
	if want := "warning: it refuses the policies; the controller keeps every rule instead"; err != nil || !strings.Contains(note, want) {
		t.Errorf("ServerNote() = %q, %v; want %q", note, err, want)
	}
}
