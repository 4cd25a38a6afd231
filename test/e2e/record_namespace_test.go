package e2e

import (
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

// Outside a cluster, a process limited with -n and no --record-namespace
// keeps its record in that namespace, as the README's Quick start has it:
// once writes it there, diff reads it there, run writes its own there; none
// is written to default, so deleting the namespace deletes them.
func TestRecordFollowsNamespace(t *testing.T) {
	ns := env.NewNamespace(t)
	env.Create(t, h.ConfigMaps, ns, h.FromYAML(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\ndata: {color: blue}\n"))
	conn := []string{"--kubeconfig", env.Kubeconfig, "-n", ns}
	notInDefault := func(manager string) {
		t.Helper()
		_, err := env.Dynamic.Resource(h.ConfigMaps).Namespace("default").Get(t.Context(), manager+"-resources", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("default/%s-resources: %v; want none there", manager, err)
		}
	}

	rulesFile := writeFile(t, "rules.yaml", "rules:\n- {name: web, resources: [configmaps], annotations: {team: web}}\n")
	once := append([]string{"--rules", rulesFile, "--field-manager", "rec-once"}, conn...)
	if _, stderr, code := runCLI(t, append([]string{"once"}, once...)...); code != 0 {
		t.Fatalf("once: exit %d: %s", code, stderr)
	}
	waitRecord(t, time.Second, ns, "rec-once", "configmaps@"+ns)
	notInDefault("rec-once")

	// diff finds the record in ns: the resource no rule names any more is
	// listed for pruning.
	replaceFile(t, rulesFile, "rules:\n- {name: web, resources: [secrets], annotations: {team: web}}\n")
	stdout, stderr, code := runCLIReadOnly(t, append([]string{"diff"}, once...)...)
	if want := "configmaps.v1 " + ns + "/web\n"; code != 1 || !strings.HasPrefix(stdout, want) || !strings.Contains(stdout, `team: "web" → <none>`) {
		t.Errorf("diff: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 1 and the prune of %s", code, stdout, stderr, want)
	}

	runRules := writeFile(t, "run-rules.yaml", "rules:\n- {name: web, resources: [configmaps], annotations: {owner: web}}\n")
	p := proc.StartRun(t, binary, append([]string{"--rules", runRules, "--field-manager", "rec-run"}, conn...)...)
	waitRecord(t, 15*time.Second, ns, "rec-run", "configmaps@"+ns)
	p.Terminate(t)
	notInDefault("rec-run")
}
