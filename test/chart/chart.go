package chart

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
)

// Dir is the chart's directory.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "deploy", "chart", "kube-annotator")
}

// Load loads the chart from Dir.
func Load() (*chartv2.Chart, error) {
	return loader.LoadDir(Dir())
}

// CIValues returns the paths of the chart's ci/*-values.yaml files, sorted.
func CIValues() ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(Dir(), "ci", "*-values.yaml"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no values file in %s", filepath.Join(Dir(), "ci"))
	}
	slices.Sort(paths)
	return paths, nil
}

// ReadValues reads a values file.
func ReadValues(path string) (map[string]any, error) {
	v, err := common.ReadValuesFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return v.AsMap(), nil
}

// MonitoringAPIs are the Prometheus Operator's kinds the chart creates on
// request, as a cluster with its CRDs serves them.
var MonitoringAPIs = []string{"monitoring.coreos.com/v1/PrometheusRule", "monitoring.coreos.com/v1/ServiceMonitor"}

// Render renders the chart with vals as `helm template --api-versions`
// with MonitoringAPIs does, for a release name in namespace on a server of
// kubeVersion (e.g. "v1.37.2"), and returns the manifests as one YAML
// stream.
func Render(ch *chartv2.Chart, vals map[string]any, name, namespace, kubeVersion string) (string, error) {
	manifests, _, err := RenderOn(ch, vals, name, namespace, kubeVersion, MonitoringAPIs)
	return manifests, err
}

// RenderOn is Render for a server that serves, besides the built-in APIs,
// apiVersions ("group/version/Kind"); it also returns the NOTES.
func RenderOn(ch *chartv2.Chart, vals map[string]any, name, namespace, kubeVersion string, apiVersions []string) (manifests, notes string, err error) {
	install := action.NewInstall(action.NewConfiguration())
	install.DryRunStrategy = action.DryRunClient
	install.Replace = true
	install.ReleaseName = name
	install.Namespace = namespace
	install.APIVersions = apiVersions
	kv, err := common.ParseKubeVersion(kubeVersion)
	if err != nil {
		return "", "", err
	}
	install.KubeVersion = kv
	rel, err := install.Run(ch, vals)
	if err != nil {
		return "", "", err
	}
	r, ok := rel.(*releasev1.Release)
	if !ok {
		return "", "", fmt.Errorf("render: a release of type %T", rel)
	}
	return r.Manifest, r.Info.Notes, nil
}

// Documents splits a YAML stream into its documents, in order, as Helm
// does, leaving out those that hold only comments.
func Documents(stream string) []string {
	docs := releaseutil.SplitManifests(stream)
	keys := slices.Collect(maps.Keys(docs))
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Compare(manifestIndex(a), manifestIndex(b))
	})
	var out []string
	for _, k := range keys {
		if hasContent(docs[k]) {
			out = append(out, docs[k])
		}
	}
	return out
}

// manifestIndex is N of SplitManifests' key "manifest-N".
func manifestIndex(key string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(key, "manifest-"))
	return n
}

// hasContent reports whether a YAML document holds more than comments.
func hasContent(doc string) bool {
	for line := range strings.SplitSeq(doc, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return true
		}
	}
	return false
}
