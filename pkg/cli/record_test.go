package cli

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// A field manager or record namespace that cannot be used is a usage
// error naming the flag, before anything talks to a cluster.
func TestRecordFlagValidation(t *testing.T) {
	tests := []struct {
		commands []string
		args     []string
		want     string
	}{
		{[]string{"run", "once", "diff", "rbac"}, []string{"--field-manager", "Team_A"},
			`error: --field-manager: "Team_A" would name the record ConfigMap "Team_A-resources", which is not a valid name: `},
		{[]string{"run", "once", "diff", "rbac"}, []string{"--field-manager="}, "error: --field-manager: must not be empty"},
		{[]string{"run", "once", "diff", "rbac"}, []string{"--field-manager", strings.Repeat("m", 129)}, "error: --field-manager: "},
		{[]string{"run", "once", "diff"}, []string{"--record-namespace", "Team_A"}, `error: --record-namespace: "Team_A" is not a namespace name: `},
		{[]string{"run"}, []string{"--admission-policies", "--field-manager", "team.a"}, `error: --field-manager: field manager "team.a" cannot name admission policies: `},
	}
	for _, tc := range tests {
		for _, cmd := range tc.commands {
			t.Run(cmd+" "+strings.Join(tc.args, " "), func(t *testing.T) {
				args := append([]string{cmd, "--rules", "does-not-exist.yaml", "--kubeconfig", "does-not-exist"}, tc.args...)
				stdout, stderr, code := invoke("kube-annotator", args...)
				if code != 2 || !strings.HasPrefix(stderr, tc.want) || !strings.HasSuffix(stderr, "See 'kube-annotator "+cmd+" --help'.\n") || stdout != "" {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and stderr starting %q", code, stdout, stderr, tc.want)
				}
			})
		}
	}
}

// once and diff prune the recorded resources that no rule names; those
// the server does not serve wait.
func TestPruneTargets(t *testing.T) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: record.Name("m"), Namespace: "ns", Labels: map[string]string{record.ManagedByLabel: record.ManagedBy}},
		Data:       map[string]string{record.FieldManagerKey: "m", record.ResourcesKey: "configmaps\ndeployments.apps\nwidgets.example.com -n a\n"},
	}
	rec := record.New(fake.NewClientset(cm).CoreV1(), "ns", "m", "")
	if err := rec.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	deployments := source.Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true}
	set := &rules.Set{Targets: map[schema.GroupVersionResource]*rules.Target{
		{Version: "v1", Resource: "configmaps"}: {Resource: source.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}}},
	}}
	notServed := errors.New("not served")
	targets, unserved := pruneTargets(rec, set, func(gr schema.GroupResource) (source.Resource, error) {
		if gr == deployments.GVR.GroupResource() {
			return deployments, nil
		}
		return source.Resource{}, notServed
	})
	if len(targets) != 1 || targets[0].Resource != deployments || len(targets[0].Rules) != 0 {
		t.Errorf("targets = %+v, want deployments with no rule", targets)
	}
	want := []unservedPrune{{schema.GroupResource{Group: "example.com", Resource: "widgets"}, notServed}}
	if !reflect.DeepEqual(unserved, want) {
		t.Errorf("unserved = %v, want %v", unserved, want)
	}
}

// The record is kept in --record-namespace; else in a Pod's namespace;
// else in -n's; else in default.
func TestRecordNamespace(t *testing.T) {
	podFile := filepath.Join(t.TempDir(), "namespace")
	if err := os.WriteFile(podFile, []byte("sys\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, saFile, flag, scope, want string
	}{
		{"flag", podFile, "rec", "team-a", "rec"},
		{"in a Pod", podFile, "", "team-a", "sys"},
		{"outside, -n", "/nonexistent", "", "team-a", "team-a"},
		{"outside, every namespace", "/nonexistent", "", "", "default"},
	}
	old := serviceAccountNamespace
	t.Cleanup(func() { serviceAccountNamespace = old })
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			serviceAccountNamespace = tc.saFile
			if got := recordNamespace(tc.flag, tc.scope); got != tc.want {
				t.Errorf("recordNamespace(%q, %q) = %q, want %q", tc.flag, tc.scope, got, tc.want)
			}
		})
	}
}
