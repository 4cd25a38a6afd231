package record

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// A record without a format version (the previous release's) and one of
// format 1 are read, and stamped with format 1 at their next write; one
// of a newer format is refused, never misread nor written.
func TestRecordFormat(t *testing.T) {
	tests := []struct {
		name, format string
		wantErr      string
	}{
		{name: "version-less"},
		{name: "format 1", format: "1"},
		{name: "newer", format: "2", wantErr: `record ns/m-resources: data.format is "2": written by a newer kube-annotator, and this one reads format 1 only`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cm := stored("m", "pods\n")
			cm.Data["extra"] = "kept"
			if tc.format != "" {
				cm.Data[FormatKey] = tc.format
			}
			client := fake.NewClientset(cm)
			r := New(client.CoreV1(), "ns", "m", "")
			err := r.Load(t.Context())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("Load() = %v, want error containing %q", err, tc.wantErr)
				}
				if err := r.Ensure(t.Context(), deployments); err == nil || writes(client) != 0 {
					t.Errorf("Ensure() = %v after %d writes, want an error and no write", err, writes(client))
				}
				return
			}
			if err != nil || len(r.Recorded()) != 1 || writes(client) != 0 {
				t.Fatalf("Load() = %v, Recorded() %v after %d writes; want pods read and no write", err, r.Recorded(), writes(client))
			}
			if err := r.Ensure(t.Context(), deployments); err != nil {
				t.Fatal(err)
			}
			got, err := client.CoreV1().ConfigMaps("ns").Get(t.Context(), Name("m"), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Data[FormatKey] != Format || got.Data["extra"] != "kept" || got.Data[ResourcesKey] != "deployments.apps\npods\n" {
				t.Errorf("record data after a write: %v; want format %s, the entries, and other keys kept", got.Data, Format)
			}
		})
	}
}

// A record this release creates carries its format.
func TestRecordFormatOfANewRecord(t *testing.T) {
	client := fake.NewClientset()
	r := New(client.CoreV1(), "ns", "m", "")
	if err := r.Ensure(t.Context(), pods); err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().ConfigMaps("ns").Get(t.Context(), Name("m"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Data[FormatKey] != Format {
		t.Errorf("new record data %v, want %s: %q", got.Data, FormatKey, Format)
	}
}
