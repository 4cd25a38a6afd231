package controller

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// Objects of the initial list that already carry what the rules want are
// decided in the event handler and not enqueued, with the per-rule gauges
// and the sync count (and Activity) kept as a sync keeps them; the
// others are enqueued and written.
func TestInitialListSettled(t *testing.T) {
	const rulesFile = "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n" +
		"- {name: audit, resources: [configmaps], mode: audit, annotations: {b: '1'}}\n"
	converged := func(name string) *unstructured.Unstructured {
		return fixture.WithOwned(fixture.ConfigMap("ns", name, map[string]string{"a": "1"}), reconcile.FieldManager, "a")
	}
	for _, tc := range []struct {
		name                 string
		objs                 []*unstructured.Unstructured
		wantAdds, wantWrites int
	}{
		{"converged", []*unstructured.Unstructured{converged("x"), converged("y")}, 0, 0},
		{"one to annotate", []*unstructured.Unstructured{converged("x"), fixture.ConfigMap("ns", "y", nil)}, 1, 1},
		{"one that carries a key we own that no rule wants",
			[]*unstructured.Unstructured{converged("x"), fixture.WithOwned(fixture.ConfigMap("ns", "y", map[string]string{"a": "1", "old": "o"}), reconcile.FieldManager, "a", "old")}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := newClient(tc.objs...)
			_, ctx := ktesting.NewTestContext(t)
			m := metrics.New()
			c := newController(client, Options{Metrics: m})
			c.SetRules(ctx, fixture.Compile(t, rulesFile))
			runController(t, ctx, c)
			syncs := func() float64 { return value(t, m.Syncs.WithLabelValues("configmaps", metrics.Success)) }
			// Each write's echo is an update, enqueued and synced too.
			testutil.WaitFor(t, 10*time.Second, "every object and echo to be synced", func() bool { return syncs() >= float64(len(tc.objs)+tc.wantWrites) })
			if got := value(t, m.Workqueue.NewAddsMetric("kube-annotator").(prometheus.Metric)) - float64(tc.wantWrites); got != float64(tc.wantAdds) {
				t.Errorf("%v keys of the initial list enqueued, want %d", got, tc.wantAdds)
			}
			testutil.WaitFor(t, 10*time.Second, "Activity to count every object decided, settled or synced", func() bool {
				decided, queued := m.Activity.Read()
				return float64(decided) == syncs() && queued == 0
			})
			if got := len(patches(client)); got != tc.wantWrites {
				t.Errorf("%d writes, want %d", got, tc.wantWrites)
			}
			if got := value(t, m.PerRule.Selected.WithLabelValues("r")); got != float64(len(tc.objs)) {
				t.Errorf("rule r selects %v objects, want %d", got, len(tc.objs))
			}
			if got := value(t, m.PerRule.AuditPending.WithLabelValues("audit")); got != float64(len(tc.objs)) {
				t.Errorf("rule audit would change %v objects, want %d", got, len(tc.objs))
			}
		})
	}
}
