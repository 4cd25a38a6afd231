package chart

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

// Versions returns the chart's version and appVersion for a build
// version as `git describe` prints it. A tag vX.Y.Z[-pre] gives X.Y.Z[-pre]
// and appVersion vX.Y.Z[-pre]; anything else (a commit, "dev", a tag and
// commits past it) gives the chart's own version with the build as a
// pre-release, e.g. 0.1.0-453c51b-dirty, and appVersion the build. The
// appVersion is the image tag `make image` builds by default.
func Versions(chartVersion, build string) (version, appVersion string, err error) {
	if build == "" {
		return "", "", fmt.Errorf("--version: empty")
	}
	if v, err := semver.StrictNewVersion(strings.TrimPrefix(build, "v")); err == nil && strings.HasPrefix(build, "v") {
		return v.String(), build, nil
	}
	base, err := semver.StrictNewVersion(chartVersion)
	if err != nil {
		return "", "", fmt.Errorf("Chart.yaml: version %q: %w", chartVersion, err)
	}
	pre := strings.Trim(regexp.MustCompile(`[^0-9A-Za-z.-]+`).ReplaceAllString(build, "-"), "-")
	v, err := base.SetPrerelease(pre)
	if err != nil {
		return "", "", fmt.Errorf("--version %q: not usable as a pre-release: %w", build, err)
	}
	return v.String(), build, nil
}

// Package writes the chart as Helm packages it into outDir, with the
// versions Versions gives for build and every file dated mtime, so that
// the same sources give the same bytes. It returns the archive's path.
func Package(ch *chartv2.Chart, build string, mtime time.Time, outDir string) (string, error) {
	version, appVersion, err := Versions(ch.Metadata.Version, build)
	if err != nil {
		return "", err
	}
	ch.Metadata.Version = version
	ch.Metadata.AppVersion = appVersion
	mtime = mtime.UTC()
	ch.ModTime = mtime
	ch.SchemaModTime = mtime
	for _, files := range [][]*common.File{ch.Raw, ch.Templates, ch.Files} {
		for _, f := range files {
			f.ModTime = mtime
		}
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", err
	}
	return chartutil.Save(ch, outDir)
}
