package chart

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

const release = "ka"

// helmConfig is Helm's action configuration for the control plane, with
// releases stored as Secrets in ns, as the helm command stores them.
func helmConfig(t *testing.T, ns string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &env.Kubeconfig
	flags.Namespace = &ns
	cfg := action.NewConfiguration()
	if err := cfg.Init(flags, ns, "secret"); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The chart installs, upgrades with other values and uninstalls with
// Helm's own actions on a real API server. Between them the controller
// runs with the arguments the chart gives its Pods, as the chart's
// ServiceAccount, and annotates; what uninstalling leaves behind is exactly
// what docs/helm.md says stays: the record ConfigMap, the leader Lease and
// the keys on the objects. The metrics the alerts and the dashboard read
// are among those the controller exports.
func TestInstallUpgradeUninstall(t *testing.T) {
	installMonitoringCRDs(t)
	objNS, ns := env.NewNamespace(t), env.NewNamespace(t)
	env.Create(t, h.Deployments, objNS, h.Deployment(t, objNS, "web", 1))
	before := snapshot(t)
	cfg := helmConfig(t, ns)
	ch, err := Load()
	if err != nil {
		t.Fatal(err)
	}

	installChart(t, cfg, ns, ch)
	p := runController(t, ns, binary)
	env.WaitForAnnotation(t, 30*time.Second, h.Deployments, objNS, "web", "sample-controller", "True")
	scraped := scrapeAndStop(t, p)

	upgraded := map[string]any{
		"replicas": 3,
		"sharding": map[string]any{"mode": "group"},
		"events":   true,
		"rules": map[string]any{"inline": map[string]any{"rules": []any{map[string]any{
			"name": "workloads", "resources": []any{"deployments"},
			"annotations": map[string]any{"sample-controller": "True"}, "labels": map[string]any{"team": "platform"},
		}}}},
		"prometheusRule": map[string]any{"enabled": true},
		"serviceMonitor": map[string]any{"enabled": true},
		"dashboard":      map[string]any{"enabled": true},
	}
	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = ns
	upgrade.WaitStrategy, upgrade.Timeout = kube.HookOnlyStrategy, time.Minute
	if _, err := upgrade.RunWithContext(t.Context(), release, ch, upgraded); err != nil {
		t.Fatalf("helm upgrade: %v", err)
	}
	now := snapshot(t)
	for _, o := range []string{
		"monitoring.coreos.com/v1/prometheusrules " + ns + "/ka-kube-annotator",
		"monitoring.coreos.com/v1/servicemonitors " + ns + "/ka-kube-annotator",
		"/v1/configmaps " + ns + "/ka-kube-annotator-dashboard",
		"policy/v1/poddisruptionbudgets " + ns + "/ka-kube-annotator",
	} {
		if !now[o] {
			t.Errorf("after the upgrade, no %s", o)
		}
	}
	p = runController(t, ns, binary)
	waitForLabel(t, objNS, "web", "team", "platform")
	scraped += scrapeAndStop(t, p)

	uninstall := action.NewUninstall(cfg)
	uninstall.WaitStrategy, uninstall.Timeout = kube.HookOnlyStrategy, time.Minute
	uninstall.DeletionPropagation = "background" // as the helm command does
	if _, err := uninstall.Run(release); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	left := snapshot(t).minus(before)
	want := []string{"/v1/configmaps " + ns + "/kube-annotator-resources", "coordination.k8s.io/v1/leases " + ns + "/ka-kube-annotator"}
	if !slices.Equal(left, want) {
		t.Errorf("after helm uninstall, new objects:\n%s\nwant only the record and the leader Lease:\n%s", strings.Join(left, "\n"), strings.Join(want, "\n"))
	}
	web := env.Get(t, h.Deployments, objNS, "web")
	if web.GetAnnotations()["sample-controller"] != "True" || web.GetLabels()["team"] != "platform" {
		t.Errorf("after helm uninstall, web lost its keys: %v %v", web.GetAnnotations(), web.GetLabels())
	}
	checkMetricNames(t, scraped)
}

// helm upgrade with new rules changes the ConfigMap and nothing of the
// Deployment's Pod template, so no Pod is replaced; the running controller
// reloads the rules from its ConfigMap volume, as the kubelet updates it,
// and applies them without a restart.
func TestUpgradeReloadsRules(t *testing.T) {
	objNS, ns := env.NewNamespace(t), env.NewNamespace(t)
	env.Create(t, h.Deployments, objNS, h.Deployment(t, objNS, "web", 1))
	cfg := helmConfig(t, ns)
	ch, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	installChart(t, cfg, ns, ch)
	// Its cluster-scoped objects (the ClusterRole, the opt-out lock) would
	// meet the next test's release of the same name.
	t.Cleanup(func() {
		uninstall := action.NewUninstall(cfg)
		uninstall.WaitStrategy, uninstall.Timeout = kube.HookOnlyStrategy, time.Minute
		if _, err := uninstall.Run(release); err != nil {
			t.Errorf("helm uninstall: %v", err)
		}
	})
	p, vol := runControllerWithVolume(t, ns, binary)
	env.WaitForAnnotation(t, 30*time.Second, h.Deployments, objNS, "web", "sample-controller", "True")
	before := env.Get(t, h.Deployments, ns, "ka-kube-annotator")

	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = ns
	upgrade.WaitStrategy, upgrade.Timeout = kube.HookOnlyStrategy, time.Minute
	if _, err := upgrade.RunWithContext(t.Context(), release, ch, map[string]any{"rules": map[string]any{"inline": map[string]any{"rules": []any{map[string]any{
		"name": "workloads", "resources": []any{"deployments"},
		"annotations": map[string]any{"sample-controller": "True"}, "labels": map[string]any{"team": "platform"},
	}}}}}); err != nil {
		t.Fatalf("helm upgrade: %v", err)
	}
	after := env.Get(t, h.Deployments, ns, "ka-kube-annotator")
	if a, b := before.Object["spec"].(map[string]any)["template"], after.Object["spec"].(map[string]any)["template"]; !reflect.DeepEqual(a, b) {
		t.Errorf("helm upgrade with new rules changed the Pod template, which replaces the Pods:\nbefore %v\nafter  %v", a, b)
	}
	var d appsv1.Deployment
	fromUnstructured(t, after.Object, &d)
	vol.Update(configMapData(t, ns, d.Spec.Template.Spec.Volumes[0].ConfigMap.Name))
	waitForLabel(t, objNS, "web", "team", "platform")
	if n := p.LogLines(t, "Rules reloaded"); n != 1 {
		t.Errorf("%q logged %d times, want once: the running controller reloads", "Rules reloaded", n)
	}
}

// installChart installs ch with its default values as the release in ns,
// as the helm command does (server-side apply), waiting for its hooks only.
func installChart(t *testing.T, cfg *action.Configuration, ns string, ch *chartv2.Chart) {
	t.Helper()
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = release, ns
	install.WaitStrategy, install.Timeout = kube.HookOnlyStrategy, time.Minute
	install.ServerSideApply = true
	if _, err := install.RunWithContext(t.Context(), ch, map[string]any{}); err != nil {
		t.Fatalf("helm install: %v", err)
	}
}
