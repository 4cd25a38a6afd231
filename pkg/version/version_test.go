package version

import (
	"runtime/debug"
	"testing"
)

func TestInfo(t *testing.T) {
	vcs := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/kube-annotator/kube-annotator", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"},
		},
	}
	installed := &debug.BuildInfo{Main: debug.Module{Path: "github.com/kube-annotator/kube-annotator", Version: "v1.2.3"}}
	tests := []struct {
		name                  string
		version, commit, date string // the linker flags
		bi                    *debug.BuildInfo
		want                  Info
	}{
		{"no build info", "dev", "", "", nil,
			Info{"dev", Unknown, Unknown, "go1.26.0", "linux/amd64"}},
		{"linker flags win", "v0.1.0", "abc", "2026-01-02T03:04:05Z", vcs,
			Info{"v0.1.0", "abc", "2026-01-02T03:04:05Z", "go1.26.0", "linux/amd64"}},
		{"from the VCS stamp", "dev", "", "", vcs,
			Info{"dev", "0123456789abcdef0123456789abcdef01234567", "2026-12-01T10:00:00Z", "go1.26.0", "linux/amd64"}},
		{"go install at a version", "dev", "", "", installed,
			Info{"v1.2.3", Unknown, Unknown, "go1.26.0", "linux/amd64"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := [3]string{Version, Commit, Date}
			Version, Commit, Date = tc.version, tc.commit, tc.date
			t.Cleanup(func() { Version, Commit, Date = old[0], old[1], old[2] })
			if got := info(tc.bi, "go1.26.0", "linux/amd64"); got != tc.want {
				t.Errorf("info() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	i := Info{"v1.2.3", "abc", "2026-12-01T10:00:00Z", "go1.26.0", "darwin/arm64"}
	want := "kube-annotator v1.2.3 (commit abc, built 2026-12-01T10:00:00Z, go1.26.0, darwin/arm64)"
	if got := i.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
