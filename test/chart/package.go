package chart

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
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

// digestRE is an image digest as the release records it.
var digestRE = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)

// PinImage makes repository, by digest, the chart's default image: it sets
// image.repository and image.digest in the chart's values.yaml, keeping
// its comments, so that an install of the packaged chart pulls the
// release's image by digest (the tag stays the appVersion's).
func PinImage(ch *chartv2.Chart, repository, digest string) error {
	if repository == "" || strings.ContainsAny(repository, " \t\n\"@") {
		return fmt.Errorf("--image-repo %q: want a repository such as ghcr.io/kube-annotator/kube-annotator", repository)
	}
	if !digestRE.MatchString(digest) {
		return fmt.Errorf("--image-digest %q: want sha256: and 64 hex digits", digest)
	}
	var raw *common.File
	for _, f := range ch.Raw {
		if f.Name == chartutil.ValuesfileName {
			raw = f
		}
	}
	if raw == nil {
		return fmt.Errorf("the chart has no %s", chartutil.ValuesfileName)
	}
	set := map[string]string{"repository": repository, "digest": digest}
	lines := strings.Split(string(raw.Data), "\n")
	inImage := false
	for i, line := range lines {
		switch {
		case line == "image:":
			inImage = true
		case line != "" && !strings.HasPrefix(line, " "):
			inImage = false
		case inImage:
			key, _, ok := strings.Cut(strings.TrimPrefix(line, "  "), ":")
			if v, want := set[key]; ok && want && strings.HasPrefix(line, "  "+key+":") {
				lines[i] = fmt.Sprintf("  %s: %q", key, v)
				delete(set, key)
			}
		}
	}
	if len(set) != 0 {
		return fmt.Errorf("%s: no image.%s to set", chartutil.ValuesfileName, slices.Sorted(maps.Keys(set))[0])
	}
	data := []byte(strings.Join(lines, "\n"))
	vals, err := common.ReadValues(data)
	if err != nil {
		return fmt.Errorf("%s with the image pinned: %w", chartutil.ValuesfileName, err)
	}
	if img, _ := vals["image"].(map[string]any); img["repository"] != repository || img["digest"] != digest {
		return fmt.Errorf("%s with the image pinned: image is %v", chartutil.ValuesfileName, vals["image"])
	}
	raw.Data, ch.Values = data, vals
	return nil
}
