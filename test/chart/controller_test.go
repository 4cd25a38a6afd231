package chart

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/kubelet"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// runController runs the binary bin as the Pods of the release in ns
// would: with the arguments of the chart's Deployment, the rules of its
// ConfigMap, as its ServiceAccount; only what a Pod learns from its
// namespace (where the record and the Leases are) and the addresses it
// serves on are given here.
func runController(t *testing.T, ns, bin string) *proc.Process {
	p, _ := runControllerWithVolume(t, ns, bin)
	return p
}

// runControllerWithVolume is runController, which also returns the
// volume its rules are read from, laid out as the kubelet lays out the
// chart's ConfigMap (kubelet.ConfigMapVolume): its Update changes it as
// the kubelet does when the ConfigMap changes.
func runControllerWithVolume(t *testing.T, ns, bin string) (*proc.Process, *kubelet.ConfigMapVolume) {
	t.Helper()
	var d appsv1.Deployment
	fromUnstructured(t, env.Get(t, h.Deployments, ns, "ka-kube-annotator").Object, &d)
	pod := d.Spec.Template.Spec
	vol := kubelet.NewConfigMapVolume(t, t.TempDir(), configMapData(t, ns, pod.Volumes[0].ConfigMap.Name))
	dir := vol.Dir
	metrics, probes := proc.FreeAddr(t), proc.FreeAddr(t)
	var args []string
	for _, a := range pod.Containers[0].Args {
		switch {
		case strings.HasPrefix(a, "--rules="):
			a = "--rules=" + filepath.Join(dir, filepath.Base(strings.TrimPrefix(a, "--rules=")))
		case strings.HasPrefix(a, "--metrics-bind-address="):
			a = "--metrics-bind-address=" + metrics
		case strings.HasPrefix(a, "--health-probe-bind-address="):
			a = "--health-probe-bind-address=" + probes
		}
		args = append(args, a)
	}
	args = append(args, "--kubeconfig="+env.Kubeconfig, "--as=system:serviceaccount:"+ns+":"+pod.ServiceAccountName,
		"--record-namespace="+ns, "--leader-election-namespace="+ns)
	p := proc.StartProcess(t, "kube-annotator", exec.Command(bin, args...))
	p.Metrics, p.Probes = metrics, probes
	return p, vol
}

// configMapData is the data of the ConfigMap name of ns.
func configMapData(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	var cm corev1.ConfigMap
	fromUnstructured(t, env.Get(t, h.ConfigMaps, ns, name).Object, &cm)
	return cm.Data
}

// scrapeAndStop reads p's metrics once its caches have synced — the
// coverage by state shows only then — then stops it with SIGTERM.
func scrapeAndStop(t *testing.T, p *proc.Process) string {
	t.Helper()
	var body []byte
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		body, err = p.ReadMetrics()
		return err == nil && promtext.MetricValue(body, "kube_annotator_informers_synced", nil) > 0 &&
			strings.Contains(string(body), "\nkube_annotator_rule_coverage_objects{"), nil
	})
	if err != nil {
		t.Fatalf("metrics: no synced informer: %v\n%s", err, body)
	}
	p.Terminate(t)
	return string(body)
}

// waitForLabel waits until Deployment ns/name carries key=value.
func waitForLabel(t *testing.T, ns, name, key, value string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		u, err := env.Dynamic.Resource(h.Deployments).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && u.GetLabels()[key] == value, nil
	})
	if err != nil {
		t.Fatalf("deployment %s/%s: no label %s=%s: %v", ns, name, key, value, err)
	}
}

// objectSet is every object of the control plane, as
// "group/version/resource namespace/name".
type objectSet map[string]bool

// snapshot lists every object the API server serves but Events.
func snapshot(t *testing.T) objectSet {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	out := objectSet{}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			if !slices.Contains(r.Verbs, "list") || r.Name == "events" {
				continue
			}
			objs, err := env.Dynamic.Resource(gv.WithResource(r.Name)).List(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list %s: %v", r.Name, err)
			}
			for _, o := range objs.Items {
				out[fmt.Sprintf("%s/%s/%s %s/%s", gv.Group, gv.Version, r.Name, o.GetNamespace(), o.GetName())] = true
			}
		}
	}
	return out
}

// minus returns the objects of s that are not in before, sorted.
func (s objectSet) minus(before objectSet) []string {
	var out []string
	for o := range s {
		if !before[o] {
			out = append(out, o)
		}
	}
	slices.Sort(out)
	return out
}

// metricNameRE matches the names of the controller's metrics in PromQL.
var metricNameRE = regexp.MustCompile(`\b(?:kube_annotator|workqueue)_[a-z_]+\b`)

// checkMetricNames checks that every metric the chart's alerts and
// dashboard read is one the controller exported in scraped.
func checkMetricNames(t *testing.T, scraped string) {
	t.Helper()
	dashboard, err := os.ReadFile(filepath.Join(Dir(), "files", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	read := metricsRead(t, dashboard)
	if len(read) < 10 {
		t.Fatalf("the alerts and the dashboard read only %v", slices.Sorted(maps.Keys(read)))
	}
	for _, m := range missingMetrics(scraped, read) {
		t.Errorf("the alerts or the dashboard read %s, which the controller does not export", m)
	}
}

// metricsRead returns the metrics that the chart's alerts, rendered with
// each sharding mode, and dashboard read.
func metricsRead(t *testing.T, dashboard []byte) map[string]bool {
	t.Helper()
	ch, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	for _, vals := range []map[string]any{
		{"prometheusRule": map[string]any{"enabled": true}},
		{"prometheusRule": map[string]any{"enabled": true}, "sharding": map[string]any{"mode": "group"}},
	} {
		rendered, err := Render(ch, vals, release, "kube-annotator", kubeVersion())
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(rendered, "\n") {
			if _, expr, ok := strings.Cut(line, "expr:"); ok {
				for _, m := range metricNameRE.FindAllString(expr, -1) {
					read[m] = true
				}
			}
		}
	}
	for _, m := range metricNameRE.FindAllString(string(dashboard), -1) {
		read[m] = true
	}
	return read
}

// missingMetrics returns, sorted, the metrics of read that scraped, a
// /metrics page, has no sample of.
func missingMetrics(scraped string, read map[string]bool) []string {
	exported := map[string]bool{}
	for line := range strings.SplitSeq(scraped, "\n") {
		if name, _, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "#") {
			name, _, _ = strings.Cut(name, "{")
			exported[name] = true
		}
	}
	var out []string
	for _, m := range slices.Sorted(maps.Keys(read)) {
		if !exported[m] {
			out = append(out, m)
		}
	}
	return out
}

// The metric check fails on a dashboard query that names a metric the
// controller does not export: given a page that exports every metric the
// chart reads, it reports exactly the one a panel added names.
func TestMetricCheckFindsUnknown(t *testing.T) {
	dashboard, err := os.ReadFile(filepath.Join(Dir(), "files", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var page strings.Builder
	for m := range metricsRead(t, dashboard) {
		page.WriteString(m + "{rule=\"r\"} 1\n")
	}
	broken := append(dashboard, []byte(`{"expr": "sum(kube_annotator_no_such_metric_total)"}`)...)
	if got := missingMetrics(page.String(), metricsRead(t, broken)); !slices.Equal(got, []string{"kube_annotator_no_such_metric_total"}) {
		t.Errorf("missingMetrics() = %q, want the unknown metric alone", got)
	}
	if got := missingMetrics(page.String(), metricsRead(t, dashboard)); len(got) > 0 {
		t.Errorf("missingMetrics() = %q on a page that exports them all", got)
	}
}

// fromUnstructured converts an object's content into a typed object.
func fromUnstructured(t *testing.T, obj map[string]any, out any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, out); err != nil {
		t.Fatal(err)
	}
}
