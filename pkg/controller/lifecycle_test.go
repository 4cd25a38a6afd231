package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/controller/expect"
	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

// A resource that the rules name at another version than its informer
// lists gets a new informer, and what was known of the objects of the
// old version is forgotten; one named at the same version keeps both.
func TestSetRulesAtAnotherVersion(t *testing.T) {
	const rule = "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1'}}\n"
	beta := schema.GroupVersionResource{Version: "v1beta1", Resource: "configmaps"}
	for _, tc := range []struct {
		name          string
		was           schema.GroupVersionResource
		wantForgotten bool
	}{
		{"same version", configMaps, false},
		{"another version", beta, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			res := rulestest.ConfigMaps
			res.GVR = tc.was
			was := &rules.Set{Targets: map[schema.GroupVersionResource]*rules.Target{tc.was: fixture.Compile(t, rule).Targets[configMaps]}}
			was.Targets[tc.was].Resource = res
			c := withCache(t, newClient(), Options{}, was)
			t.Cleanup(c.stopAll)
			key := Key{tc.was, "ns", "x"}
			c.expect.Record(expect.Key(key), "1", "2", patch.Change{}, false)
			first := informerOf(c, tc.was)

			c.SetRules(ctx, fixture.Compile(t, rule))
			ri := informerOf(c, configMaps)
			if ri == nil || (ri != first) != tc.wantForgotten {
				t.Errorf("informer of %s kept: %v; want it kept only at the same version", configMaps, ri == first)
			}
			if got := !c.expect.Pending(expect.Key(key), "1"); got != tc.wantForgotten {
				t.Errorf("expectation of %s forgotten: %v, want %v", key, got, tc.wantForgotten)
			}
		})
	}
}
