package chart

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
)

func TestVersions(t *testing.T) {
	for _, tc := range []struct {
		build, version, appVersion string
		wantErr                    bool
	}{
		{build: "v1.2.3", version: "1.2.3", appVersion: "v1.2.3"},
		{build: "v1.2.3-rc.1", version: "1.2.3-rc.1", appVersion: "v1.2.3-rc.1"},
		{build: "v1.2.3-4-g453c51b", version: "1.2.3-4-g453c51b", appVersion: "v1.2.3-4-g453c51b"},
		{build: "453c51b-dirty", version: "0.1.0-453c51b-dirty", appVersion: "453c51b-dirty"},
		{build: "dev", version: "0.1.0-dev", appVersion: "dev"},
		{build: "1.2.3", version: "0.1.0-1.2.3", appVersion: "1.2.3"},
		{build: "", wantErr: true},
	} {
		t.Run(tc.build, func(t *testing.T) {
			v, app, err := Versions("0.1.0", tc.build)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if v != tc.version || app != tc.appVersion {
				t.Errorf("Versions(%q) = %q, %q; want %q, %q", tc.build, v, app, tc.version, tc.appVersion)
			}
		})
	}
}

// Packaging the same sources twice, whatever the files' own dates, gives
// the same bytes; the archive loads with the version asked for.
func TestPackageIsReproducible(t *testing.T) {
	mtime := time.Unix(1700000000, 0)
	var archives [][]byte
	for i := range 2 {
		ch, err := Load()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ch.Templates {
			f.ModTime = time.Now().Add(time.Duration(i) * time.Hour)
		}
		path, err := Package(ch, "v1.2.3", mtime, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(path) != "kube-annotator-1.2.3.tgz" {
			t.Errorf("archive %s, want kube-annotator-1.2.3.tgz", path)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		archives = append(archives, data)
		loaded, err := loader.LoadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if loaded.Metadata.Version != "1.2.3" || loaded.Metadata.AppVersion != "v1.2.3" || len(loaded.Templates) == 0 || loaded.Schema == nil {
			t.Errorf("packaged chart: version %q appVersion %q, %d templates, schema %v",
				loaded.Metadata.Version, loaded.Metadata.AppVersion, len(loaded.Templates), loaded.Schema != nil)
		}
	}
	if !bytes.Equal(archives[0], archives[1]) {
		t.Error("two packagings of the same sources differ")
	}
}

// A release's packaged chart pulls the release's image by digest: its
// values.yaml, comments kept, names the repository and the digest, and
// the Deployment it renders runs REPO:vX.Y.Z@DIGEST.
func TestPinImage(t *testing.T) {
	digest := "sha256:" + strings.Repeat("0a", 32)
	for _, tc := range []struct {
		name, repo, digest, wantErr string
	}{
		{name: "release", repo: "ghcr.io/kube-annotator/kube-annotator", digest: digest},
		{name: "no digest", repo: "ghcr.io/kube-annotator/kube-annotator", digest: "", wantErr: "--image-digest"},
		{name: "short digest", repo: "r/k", digest: "sha256:0a0a", wantErr: "--image-digest"},
		{name: "no repository", repo: "", digest: digest, wantErr: "--image-repo"},
		{name: "repository with a digest", repo: "r/k@sha256:00", digest: digest, wantErr: "--image-repo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := Load()
			if err != nil {
				t.Fatal(err)
			}
			err = PinImage(ch, tc.repo, tc.digest)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			path, err := Package(ch, "v1.2.3", time.Unix(1700000000, 0), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := loader.LoadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range loaded.Raw {
				if f.Name == "values.yaml" && !strings.Contains(string(f.Data), "# -- Image digest") {
					t.Errorf("the packaged values.yaml lost its comments:\n%s", f.Data)
				}
			}
			rendered, err := Render(loaded, map[string]any{}, "ka", "kube-annotator", "v1.37.0")
			if err != nil {
				t.Fatal(err)
			}
			want := `image: "` + tc.repo + ":v1.2.3@" + tc.digest + `"`
			if !strings.Contains(rendered, want) {
				t.Errorf("the packaged chart renders no %q", want)
			}
		})
	}
}
