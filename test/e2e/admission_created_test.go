package e2e

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// startAdmission starts `run --admission-policies` on rulesFile, waits
// until its policies apply in ns, and returns false. Without
// MutatingAdmissionPolicy v1 (1.35), it checks instead that run reports
// that it cannot install them and runs on (admissionRunDegraded), and
// returns true: objects are then created without the rules' keys, which
// the controller sets right after.
func startAdmission(t *testing.T, ns, rulesFile string) (degraded bool) {
	t.Helper()
	if !env.Features.MutatingAdmissionPolicyV1 {
		admissionRunDegraded(t, env, ns, rulesFile)
		return true
	}
	deletePoliciesAtEnd(t)
	startRun(t, "--rules", rulesFile, "--admission-policies")
	waitPolicies(t, ns, 15*time.Second)
	return false
}

// checkCreated checks obj as its create response returned it: with the
// policies (degraded false), it carries the annotations and labels of
// want with their values (a "" value: the key is absent); degraded, it
// carries none of their keys.
func checkCreated(t *testing.T, degraded bool, obj *unstructured.Unstructured, annotations, labels map[string]string) {
	t.Helper()
	for _, set := range []struct {
		name      string
		got, want map[string]string
	}{{"annotation", obj.GetAnnotations(), annotations}, {"label", obj.GetLabels(), labels}} {
		for k, v := range set.want {
			have, ok := set.got[k]
			switch {
			case degraded && ok:
				t.Errorf("%s in the create response: %s %s=%q, want none without MutatingAdmissionPolicy v1", obj.GetName(), set.name, k, have)
			case !degraded && (v == "" && ok || v != "" && have != v):
				t.Errorf("%s in the create response: %s %s=%q (present %v), want %q", obj.GetName(), set.name, k, have, ok, v)
			}
		}
	}
}
