package memory

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
)

// TestRulesWhenCacheFieldsOfDeployments checks that the memory measured
// with rulesWhenYAML is what its table says it is: the Deployments'
// informer caches the fields read, while the other resources stay on
// metadata as with rig.RulesYAML, and the same annotation is set everywhere.
func TestRulesWhenCacheFieldsOfDeployments(t *testing.T) {
	served := []source.Resource{rulestest.Deployments,
		{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, Kind: "ReplicaSet", Namespaced: true},
		rulestest.Pods,
	}
	// rulestest resolves resources by plural alone: the Frigates, a
	// custom resource like the others, are left out.
	withoutFrigates := func(s string) string { return strings.Replace(s, ", frigates.ship.nwiizo.dev]", "]", 1) }
	literal := rulestest.Compile(t, withoutFrigates(rig.RulesYAML), served...)
	when := rulestest.Compile(t, withoutFrigates(rulesWhenYAML), served...)
	if len(literal.Targets) != len(served) || len(when.Targets) != len(served) {
		t.Fatalf("targets: %d with rulesYAML, %d with rulesWhenYAML; want %d each", len(literal.Targets), len(when.Targets), len(served))
	}
	for gvr, tw := range when.Targets {
		wantWhole := gvr == rulestest.Deployments.GVR
		if got := tw.Projection().Whole; got != wantWhole {
			t.Errorf("%s: caches fields = %v with rulesWhenYAML, want %v", gvr.Resource, got, wantWhole)
		}
		if literal.Targets[gvr].Projection().Whole {
			t.Errorf("%s: caches fields with rulesYAML, want metadata only", gvr.Resource)
		}
	}
}
