package cli

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// explain's text shows a when condition and the fields it read, whether
// it holds or not, each computed value with how it is computed and the
// fields it read, the default and why, how a label value was made valid,
// and a key set only where absent.
func TestExplainShowsInputs(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}, Data: map[string]string{"tier": "web", "k": "v"}}
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"team": "a"}}}
	srv := httptest.NewServer(&fakeAPIServer{objects: map[string]any{
		"/api/v1/namespaces/shop/configmaps/web": cm, "/api/v1/namespaces/shop": ns}})
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(`rules:
- name: web
  resources: [cm]
  when: "object.?data[?'tier'].orValue('') == 'web'"
  labels: {web: "true"}
- name: db
  resources: [cm]
  when: "object.?data[?'tier'].orValue('') == 'db'"
  labels: {db: "true"}
- name: computed
  resources: [cm]
  annotations:
    id: {cel: "object.metadata.name + ':' + object.data.k"}
    owner: {jsonPath: '{.data.owner}', default: unknown}
    team: {fromNamespace: {label: team}}
  labels:
    psa: {value: baseline, ifAbsent: true}
    name: {cel: "object.metadata.name + ' ' + object.data.k", ifInvalid: sanitize}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := invoke("kube-annotator", "explain", "cm/web", "-n", "shop", "--rules", path, "--server", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	rulesPart, _, _ := strings.Cut(stdout, "\nKeys ")
	var lines []string
	for _, l := range strings.Split(rulesPart, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " ")) // columns, as single spaces
	}
	got := strings.Join(lines, "\n")
	want := `Rules:
web (enforce) selects; wants:
when "object.?data[?'tier'].orValue('') == 'web'" holds
reading object.data.tier = "web"
label web "true"
db (enforce) does not select: when "object.?data[?'tier'].orValue('') == 'db'" is false
reading object.data.tier = "web"
computed (enforce) selects; wants:
annotation id "web:v"
computed by cel "object.metadata.name + ':' + object.data.k"
reading object.data.k = "v"
reading object.metadata.name = "web"
annotation owner "unknown"
computed by jsonPath "{.data.owner}"
the default, as the source is missing: owner is not found
annotation team "a"
computed by fromNamespace label "team"
reading namespaceObject.metadata.labels.team = "a"
label name "web-v"
computed by cel "object.metadata.name + ' ' + object.data.k"
reading object.data.k = "v"
reading object.metadata.name = "web"
made a valid label value (ifInvalid): sanitized from 5 characters
label psa "baseline" only where absent
`
	if !strings.Contains(got, want) {
		t.Errorf("explain printed (columns as single spaces):\n%s\nwant it to contain\n%s", got, want)
	}
}
