package chart

import (
	"strings"
	"testing"
)

// Without the Prometheus Operator's CRDs, prometheusRule.enabled and
// serviceMonitor.enabled create nothing, so that the install does not fail,
// and NOTES say so and how to fix it; with them, both are created and
// NOTES warn of nothing. NOTES name the image the Pods run.
func TestMonitoringWithoutOperator(t *testing.T) {
	ch, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{"prometheusRule": map[string]any{"enabled": true}, "serviceMonitor": map[string]any{"enabled": true}}
	for _, tc := range []struct {
		name     string
		apis     []string
		wantKind []string
		warning  string
	}{
		{"no CRDs", nil, nil, "WARNING: not installed: PrometheusRule (prometheusRule.enabled), ServiceMonitor (serviceMonitor.enabled)"},
		{"only ServiceMonitor", MonitoringAPIs[1:], []string{"ServiceMonitor"}, "WARNING: not installed: PrometheusRule (prometheusRule.enabled). The cluster does not serve monitoring.coreos.com/v1"},
		{"both", MonitoringAPIs, []string{"PrometheusRule", "ServiceMonitor"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manifests, notes, err := RenderOn(ch, vals, release, "kube-annotator", kubeVersion(), tc.apis)
			if err != nil {
				t.Fatal(err)
			}
			objs := objects(t, manifests)
			for _, kind := range []string{"PrometheusRule", "ServiceMonitor"} {
				got, want := len(byKind(objs, kind)), 0
				if strings.Contains(strings.Join(tc.wantKind, " "), kind) {
					want = 1
				}
				if got != want {
					t.Errorf("%d %s rendered, want %d", got, kind, want)
				}
			}
			if tc.warning == "" && strings.Contains(notes, "WARNING") || !strings.Contains(notes, tc.warning) {
				t.Errorf("NOTES:\n%s\nwant the warning %q", notes, tc.warning)
			}
		})
	}
}

// NOTES name the image the Deployment runs: the chart's appVersion as its
// tag by default, else the tag and digest of the values.
func TestNotesImage(t *testing.T) {
	ch, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name  string
		image map[string]any
		want  string
	}{
		{"defaults", map[string]any{}, "kube-annotator:" + ch.Metadata.AppVersion},
		{"tagged", map[string]any{"repository": "registry.example/ka", "tag": "v0.3.0"}, "registry.example/ka:v0.3.0"},
		{"tag and digest", map[string]any{"repository": "registry.example/ka", "tag": "v0.3.0", "digest": digest}, "registry.example/ka:v0.3.0@" + digest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manifests, notes, err := RenderOn(ch, map[string]any{"image": tc.image}, release, "kube-annotator", kubeVersion(), nil)
			if err != nil {
				t.Fatal(err)
			}
			deployments := byKind(objects(t, manifests), "Deployment")
			if len(deployments) != 1 {
				t.Fatalf("%d Deployments rendered, want 1", len(deployments))
			}
			if !strings.Contains(manifests, `image: "`+tc.want+`"`) {
				t.Errorf("the Deployment does not run %s", tc.want)
			}
			if !strings.Contains(notes, "(image "+tc.want+")") {
				t.Errorf("NOTES:\n%s\nwant them to name the image %s", notes, tc.want)
			}
			if tc.name != "defaults" && strings.Contains(notes, ":"+ch.Metadata.AppVersion+")") {
				t.Errorf("NOTES name the chart's appVersion %q, not the image deployed:\n%s", ch.Metadata.AppVersion, notes)
			}
		})
	}
}
