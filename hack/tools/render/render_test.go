package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseImage(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	tests := []struct {
		in      string
		want    imageRef
		wantErr string
	}{
		{"kube-annotator", imageRef{name: "kube-annotator"}, ""},
		{"r.example:5000/ka/kube-annotator:v1.2.3", imageRef{name: "r.example:5000/ka/kube-annotator", tag: "v1.2.3"}, ""},
		{"r.example:5000/kube-annotator@" + digest, imageRef{name: "r.example:5000/kube-annotator", digest: digest}, ""},
		{"r.example/kube-annotator:v1@" + digest, imageRef{name: "r.example/kube-annotator", tag: "v1", digest: digest}, ""},
		{"", imageRef{}, "got nothing"},
		{"kube-annotator:v1@sha256:abc", imageRef{}, "64 hex digits"},
		{"kube-annotator:", imageRef{}, "empty tag"},
		{":v1", imageRef{}, "bad repository"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseImage(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseImage(%q) = %+v, %v; want an error with %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("parseImage(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
}

// The repository's deploy/ renders with the image pinned by tag and
// digest, the same bytes every time.
func TestRenderDeploy(t *testing.T) {
	digest := "sha256:" + strings.Repeat("0f", 32)
	out := filepath.Join(t.TempDir(), "install.yaml")
	image := "registry.example/kube-annotator:v1.2.3@" + digest
	if err := run("../../../deploy", image, out, "kube-annotator v1.2.3"); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# kube-annotator v1.2.3\n", "image: " + image + "\n", "kind: Deployment", "name: kube-annotator-rules"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("install.yaml lacks %q", want)
		}
	}
	if strings.Contains(string(got), "kube-annotator:dev") {
		t.Error("install.yaml still names kube-annotator:dev")
	}
	again := filepath.Join(t.TempDir(), "install.yaml")
	if err := run("../../../deploy", image, again, "kube-annotator v1.2.3"); err != nil {
		t.Fatal(err)
	}
	if second, _ := os.ReadFile(again); string(second) != string(got) {
		t.Error("two renders differ")
	}
	if err := run("../../../nowhere", image, again, ""); err == nil || !strings.Contains(err.Error(), "--dir") {
		t.Errorf("render of a missing directory: %v, want an error naming --dir", err)
	}
}
