package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

var (
	roles        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	roleBindings = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
)

// A controller whose identity may patch the objects of its rules but not
// create its record writes nothing, counts why, and is not ready, saying
// so; granted the record, it writes and is ready again.
func TestRecordUnwritableNotReady(t *testing.T) {
	ns := env.NewNamespace(t)
	env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, settings.name))
	const user = "e2e-record-unwritable"
	grant(t, ns, user, "patch-only", `
- {apiGroups: [""], resources: [configmaps], verbs: [get, list, watch, patch]}`)
	grantWatchNamespaces(t, "e2e-record-unwritable-"+ns, user)

	rulesFile := writeFile(t, "rules.yaml", configMapsRules)
	p := startRun(t, "--rules", rulesFile, "-n", ns, "--record-namespace", ns, "--as", user)
	forbidden := map[string]string{"reason": "Forbidden"}
	waitFor(t, 30*time.Second, "/readyz 503 saying the record cannot be written", func() bool {
		return p.Ready(t) == 503 && strings.Contains(p.Readyz(t), "cannot write the record")
	})
	readyz := p.Readyz(t)
	for _, want := range []string{"record " + ns + "/kube-annotator-resources", "cannot create resource", "kube-annotator rbac"} {
		if !strings.Contains(readyz, want) {
			t.Errorf("/readyz = %q, want it to name the record, the server's answer and where the grant comes from (%q)", readyz, want)
		}
	}
	body := p.Scrape(t)
	if got := promtext.MetricValue(body, "kube_annotator_record_write_errors_total", forbidden); got < 1 {
		t.Errorf("kube_annotator_record_write_errors_total{reason=Forbidden} = %v, want >= 1", got)
	}
	if got := promtext.MetricValue(body, "kube_annotator_record_write_failing", nil); got != 1 {
		t.Errorf("kube_annotator_record_write_failing = %v, want 1", got)
	}
	if got := promtext.MetricValue(body, "kube_annotator_writes_total", map[string]string{"resource": "configmaps", "result": "success"}); got != 0 {
		t.Errorf("kube_annotator_writes_total{result=success} = %v while the record cannot be written, want 0", got)
	}
	if carriesKey(t, ns, settings, "sample-controller") {
		t.Errorf("the ConfigMap was annotated although its resource could not be recorded")
	}

	// What kube-annotator rbac grants for the record.
	grant(t, ns, user, "record", `
- {apiGroups: [""], resources: [configmaps], verbs: [create]}
- {apiGroups: [""], resources: [configmaps], verbs: [get, update], resourceNames: [kube-annotator-resources]}`)
	env.WaitForAnnotation(t, 60*time.Second, h.ConfigMaps, ns, settings.name, "sample-controller", "True")
	waitFor(t, 10*time.Second, "/readyz 200 once the record is written", func() bool { return p.Ready(t) == 200 })
	p.WaitMetric(t, 5*time.Second, "kube_annotator_record_write_failing", 0)
	waitRecord(t, 5*time.Second, ns, "kube-annotator", "configmaps@"+ns)
}

// grant gives user, in ns, the Role name with rules (a YAML list).
func grant(t *testing.T, ns, user, name, rules string) {
	t.Helper()
	env.Create(t, roles, ns, h.FromYAML(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: `+name+`}
rules:`+rules+"\n"))
	env.Create(t, roleBindings, ns, h.FromYAML(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: `+name+`}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: `+name+`}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: `+user+`}]
`))
}

// grantWatchNamespaces lets user list and watch namespaces, which the
// controller watches for opt-outs, through a ClusterRole and binding
// named name, deleted at the test's end.
func grantWatchNamespaces(t *testing.T, name, user string) {
	t.Helper()
	env.Create(t, clusterRoles, "", h.FromYAML(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: `+name+`}
rules:
- {apiGroups: [""], resources: [namespaces], verbs: [list, watch]}
`))
	env.Create(t, clusterRoleBindings, "", h.FromYAML(t, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: `+name+`}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: `+name+`}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: `+user+`}]
`))
	t.Cleanup(func() {
		for _, gvr := range []schema.GroupVersionResource{clusterRoleBindings, clusterRoles} {
			_ = env.Dynamic.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
}
