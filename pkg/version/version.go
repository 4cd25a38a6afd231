package version

import (
	"runtime"
	"runtime/debug"
)

// Set at build time with -ldflags "-X
// github.com/kube-annotator/kube-annotator/pkg/version.Version=…" (and
// .Commit, .Date); `make build` and `make release` set all three. A build
// without them (`go install`) takes what the Go toolchain recorded.
var (
	// Version is the release, e.g. v1.2.3, or `git describe` output.
	Version = "dev"
	// Commit is the full git commit hash the binary was built from.
	Commit = ""
	// Date is when that commit was made, RFC 3339 in UTC: a release's build
	// date is its commit's, so that two builds of it are identical.
	Date = ""
)

// Unknown stands for a commit or date the build did not record.
const Unknown = "unknown"

// Info is what `kube-annotator version` prints.
type Info struct {
	Version   string `json:"version"`
	GitCommit string `json:"gitCommit"`
	BuildDate string `json:"buildDate"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the running binary's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return info(bi, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// info fills in what the linker flags left unset from the build info the
// Go toolchain recorded (a module version for `go install …@v1.2.3`, the
// VCS revision and time for a build in a git checkout).
func info(bi *debug.BuildInfo, goVersion, platform string) Info {
	i := Info{Version: Version, GitCommit: Commit, BuildDate: Date, GoVersion: goVersion, Platform: platform}
	if bi != nil {
		if i.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			i.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && i.GitCommit == "":
				i.GitCommit = s.Value
			case s.Key == "vcs.time" && i.BuildDate == "":
				i.BuildDate = s.Value
			}
		}
	}
	if i.GitCommit == "" {
		i.GitCommit = Unknown
	}
	if i.BuildDate == "" {
		i.BuildDate = Unknown
	}
	return i
}

// String is the one-line form: kube-annotator v1.2.3 (commit …, built …,
// go1.26.0, linux/amd64).
func (i Info) String() string {
	return "kube-annotator " + i.Version + " (commit " + i.GitCommit + ", built " + i.BuildDate + ", " + i.GoVersion + ", " + i.Platform + ")"
}

// UserAgent is what the controller tells the API server it is.
func UserAgent() string { return "kube-annotator/" + Version }
