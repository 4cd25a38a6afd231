package chart

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// ciCase is the chart rendered with one values file of ci/ ("" for the
// defaults alone).
type ciCase struct {
	name, path string
	values     map[string]any
	rendered   string
}

// ciCases renders the chart with the defaults and with every ci/ values
// file, as release "ka" in namespace ns.
func ciCases(t *testing.T, ns string) []ciCase {
	t.Helper()
	paths, err := CIValues()
	if err != nil {
		t.Fatal(err)
	}
	var out []ciCase
	for _, p := range paths {
		vals, err := ReadValues(p)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := Load()
		if err != nil {
			t.Fatal(err)
		}
		rendered, err := Render(ch, vals, "ka", ns, kubeVersion())
		if err != nil {
			t.Fatalf("render with %s: %v", p, err)
		}
		out = append(out, ciCase{name: ciName(p), path: p, values: vals, rendered: rendered})
	}
	return out
}

// `helm lint --strict`, with the defaults and with each ci/ values file,
// reports nothing above INFO.
func TestLint(t *testing.T) {
	paths, err := CIValues()
	if err != nil {
		t.Fatal(err)
	}
	kv, err := common.ParseKubeVersion(kubeVersion())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append([]string{""}, paths...) {
		vals := map[string]any{}
		if p != "" {
			if vals, err = ReadValues(p); err != nil {
				t.Fatal(err)
			}
		}
		lint := action.NewLint()
		lint.Strict = true
		lint.Namespace = "kube-annotator"
		lint.KubeVersion = kv
		res := lint.Run([]string{Dir()}, vals)
		for _, m := range res.Messages {
			if m.Severity > support.InfoSev {
				t.Errorf("lint with %q: %s", p, m)
			} else {
				t.Logf("lint with %q: %s", p, m)
			}
		}
		for _, err := range res.Errors {
			t.Errorf("lint with %q: %v", p, err)
		}
	}
}

// Every object the chart renders for each ci/ values file is accepted by
// the API server (a server-side apply, dry run), and the rules the
// ConfigMap holds are a valid rules file.
func TestCIValuesAreAccepted(t *testing.T) {
	installMonitoringCRDs(t)
	m := mapper(t)
	for _, c := range ciCases(t, "kube-annotator") {
		t.Run(c.name, func(t *testing.T) {
			ns := env.NewNamespace(t)
			ch, err := Load()
			if err != nil {
				t.Fatal(err)
			}
			rendered, err := Render(ch, c.values, "ka", ns, kubeVersion())
			if err != nil {
				t.Fatal(err)
			}
			objs := objects(t, rendered)
			for _, o := range objs {
				gvk := o.GroupVersionKind()
				mapping, err := m.RESTMapping(gvk.GroupKind(), gvk.Version)
				if err != nil {
					t.Fatalf("%s: %v", gvk, err)
				}
				ri := env.Dynamic.Resource(mapping.Resource).Namespace(o.GetNamespace())
				if _, err := ri.Apply(t.Context(), o.GetName(), o, metav1.ApplyOptions{FieldManager: "chart-test", DryRun: []string{metav1.DryRunAll}}); err != nil {
					t.Errorf("%s %s/%s: the API server refuses it: %v", gvk.Kind, o.GetNamespace(), o.GetName(), err)
				}
			}
			for _, cm := range byKind(objs, "ConfigMap") {
				if strings.HasSuffix(cm.GetName(), "-dashboard") {
					continue
				}
				var typed corev1.ConfigMap
				into(t, cm, &typed)
				for key, data := range typed.Data {
					if _, err := rules.Parse(key, []byte(data)); err != nil {
						t.Errorf("ConfigMap %s: %v", cm.GetName(), err)
					}
				}
			}
		})
	}
}

// The Pods run hardened by default, with the arguments each sharding mode
// needs.
func TestWorkload(t *testing.T) {
	for _, c := range ciCases(t, "kube-annotator") {
		t.Run(c.name, func(t *testing.T) {
			objs := objects(t, c.rendered)
			var spec corev1.PodSpec
			var replicas *int32
			mode, _ := value(c.values, "sharding", "mode").(string)
			if mode == "static" {
				var sts appsv1.StatefulSet
				into(t, one(t, objs, "StatefulSet"), &sts)
				spec, replicas = sts.Spec.Template.Spec, sts.Spec.Replicas
			} else {
				var d appsv1.Deployment
				into(t, one(t, objs, "Deployment"), &d)
				spec, replicas = d.Spec.Template.Spec, d.Spec.Replicas
			}
			psc, sc := spec.SecurityContext, spec.Containers[0].SecurityContext
			if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("pod security context %+v: want runAsNonRoot and the RuntimeDefault seccomp profile", psc)
			}
			if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
				sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
				t.Errorf("container security context %+v: want restricted", sc)
			}
			args := strings.Join(spec.Containers[0].Args, " ")
			want := map[string][]string{
				"":       {"--leader-elect", "--leader-election-id="},
				"none":   {"--leader-elect", "--leader-election-id="},
				"static": {"--shard=$(SHARD)", fmt.Sprintf("--total-shards=%d", *replicas)},
				"group":  {"--shard-group="},
			}[mode]
			for _, w := range want {
				if !strings.Contains(args, w) {
					t.Errorf("args %q lack %q", args, w)
				}
			}
		})
	}
}

// The ServiceMonitor and PrometheusRule decode strictly into the Prometheus
// Operator's own types; the alerts the issue asks for are there.
func TestMonitoringObjects(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range ciCases(t, "kube-annotator") {
		objs := objects(t, c.rendered)
		for _, o := range byKind(objs, "ServiceMonitor") {
			var sm monitoringv1.ServiceMonitor
			into(t, o, &sm)
			if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" {
				t.Errorf("%s: ServiceMonitor endpoints %+v, want port metrics", c.name, sm.Spec.Endpoints)
			}
		}
		for _, o := range byKind(objs, "PrometheusRule") {
			var pr monitoringv1.PrometheusRule
			into(t, o, &pr)
			for _, g := range pr.Spec.Groups {
				for _, r := range g.Rules {
					seen[r.Alert] = true
					if r.Expr.String() == "" || r.For == nil {
						t.Errorf("%s: alert %s: no expression or no for", c.name, r.Alert)
					}
				}
			}
		}
	}
	for _, alert := range []string{"KubeAnnotatorObjectsNotConverging", "KubeAnnotatorWriteErrors", "KubeAnnotatorPrunePending",
		"KubeAnnotatorReloadHeld", "KubeAnnotatorRulesInvalid", "KubeAnnotatorShardCoverage", "KubeAnnotatorNoLeader",
		"KubeAnnotatorRecordUnwritable", "KubeAnnotatorResourcesUnresolved", "KubeAnnotatorInformersNotSynced",
		"KubeAnnotatorListWatchForbidden", "KubeAnnotatorFighting"} {
		if !seen[alert] {
			t.Errorf("no ci/ values file renders the alert %s", alert)
		}
	}
}

// waitServed waits until the API server serves gvr.
func waitServed(t *testing.T, gvr schema.GroupVersionResource) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := env.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("%s not served: %v", gvr, err)
	}
}

// value is the value at path in vals, nil if there is none.
func value(vals map[string]any, path ...string) any {
	var v any = vals
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
