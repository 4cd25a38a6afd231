package controller

import (
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// HasSynced, which readiness reports, is false until the controller has
// rules and their informers have listed: a controller without rules yet
// has no informer to wait for, but has cached nothing either.
func TestHasSynced(t *testing.T) {
	tests := []struct {
		name  string
		rules *rules.Set // nil: SetRules not called
		want  bool
	}{
		{"before its first rules", nil, false},
		{"with no rules at all", &rules.Set{}, true},
		{"with rules whose informers listed", fixture.Compile(t, "rules:\n- {name: r, resources: [configmaps], annotations: {a: b}}\n"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			c := newController(newClient(ours("x")), Options{Metrics: metrics.New(), Record: newRecord(cmGR)})
			if tc.rules != nil {
				c.SetRules(ctx, tc.rules)
			}
			runController(t, ctx, c)
			if !tc.want {
				if c.HasSynced() {
					t.Errorf("HasSynced() = true, want false")
				}
				return
			}
			testutil.WaitFor(t, 10*time.Second, "caches to sync", c.HasSynced)
		})
	}
}
