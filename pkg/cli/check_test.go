package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kube-annotator/kube-annotator/pkg/check"
)

// fakeAPIServer serves, over plain HTTP, the discovery of the core group
// with configmaps and serviceaccounts only and of MutatingAdmissionPolicy
// v1 unless noAdmissionPolicies (as Kubernetes 1.35, whose version it then
// says), and access reviews that allow every verb but those denied, and
// nothing in the namespaces deniedIn ("": all namespaces). A part
// that is down answers every request with an internal error.
type fakeAPIServer struct {
	denied, deniedIn           []string
	discoveryDown, reviewsDown bool
	noAdmissionPolicies        bool
	// objects are served at their paths, e.g. /api/v1/namespaces/a/configmaps/b.
	objects map[string]any
}

func (f *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reply := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if err := json.NewEncoder(w).Encode(v); err != nil {
			panic(err)
		}
	}
	down := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Code: http.StatusInternalServerError, Reason: metav1.StatusReasonInternalError, Message: "etcd is down"}
	switch {
	case r.URL.Path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" && r.Method == http.MethodPost:
		if f.reviewsDown {
			reply(http.StatusInternalServerError, down)
			return
		}
		var review authorizationv1.SelfSubjectAccessReview
		body, err := io.ReadAll(r.Body)
		if err == nil {
			_, _, err = scheme.Codecs.UniversalDeserializer().Decode(body, nil, &review) // JSON or protobuf
		}
		if err != nil {
			reply(http.StatusBadRequest, err.Error())
			return
		}
		attrs := review.Spec.ResourceAttributes
		review.Status.Allowed = !slices.Contains(f.denied, attrs.Verb) && !slices.Contains(f.deniedIn, attrs.Namespace)
		reply(http.StatusCreated, review)
	case f.objects[r.URL.Path] != nil && r.Method == http.MethodGet:
		reply(http.StatusOK, f.objects[r.URL.Path])
	case f.discoveryDown:
		reply(http.StatusInternalServerError, down)
	case r.URL.Path == "/api":
		reply(http.StatusOK, metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
	case r.URL.Path == "/apis":
		groups := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
		if !f.noAdmissionPolicies {
			v1 := metav1.GroupVersionForDiscovery{GroupVersion: "admissionregistration.k8s.io/v1", Version: "v1"}
			groups.Groups = []metav1.APIGroup{{Name: "admissionregistration.k8s.io", Versions: []metav1.GroupVersionForDiscovery{v1}, PreferredVersion: v1}}
		}
		reply(http.StatusOK, groups)
	case r.URL.Path == "/apis/admissionregistration.k8s.io/v1" && !f.noAdmissionPolicies:
		reply(http.StatusOK, metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "admissionregistration.k8s.io/v1",
			APIResources: []metav1.APIResource{{Name: "mutatingadmissionpolicies", SingularName: "mutatingadmissionpolicy", Kind: "MutatingAdmissionPolicy",
				Verbs: metav1.Verbs{"get", "list", "watch", "patch"}}}})
	case r.URL.Path == "/version" && f.noAdmissionPolicies:
		reply(http.StatusOK, map[string]string{"gitVersion": "v1.35.4"})
	case r.URL.Path == "/api/v1":
		reply(http.StatusOK, metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: "v1",
			APIResources: []metav1.APIResource{{Name: "configmaps", SingularName: "configmap", Kind: "ConfigMap", Namespaced: true,
				ShortNames: []string{"cm"}, Verbs: metav1.Verbs{"get", "list", "watch", "patch"}},
				{Name: "serviceaccounts", SingularName: "serviceaccount", Kind: "ServiceAccount", Namespaced: true,
					ShortNames: []string{"sa"}, Verbs: metav1.Verbs{"get", "list", "watch", "patch"}}}})
	default:
		http.NotFound(w, r)
	}
}

// check tells a resource that is not served from an API server that could
// not be asked: the first is a verdict on the rules, the second none.
func TestCheckCommand(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none")) // no kubeconfig but --server
	const (
		cms     = "rules:\n- name: cms\n  resources: [cm]\n  annotations: {a: \"1\"}\n"
		widgets = cms + "- name: widgets\n  resources: [widgets.example.com]\n  annotations: {b: \"2\"}\n"
		inAB    = "rules:\n- name: cms\n  resources: [cm]\n  namespaces: [a, b]\n  annotations: {a: \"1\"}\n"
	)
	tests := []struct {
		name       string
		server     fakeAPIServer
		rules      string
		wantCode   int
		wantRows   [][]string
		wantStderr []string // substrings; none: stderr empty
	}{
		{name: "served and allowed", rules: cms, wantCode: 0,
			wantRows: [][]string{{"cms", "cm", "configmaps.v1", "ok"}}},
		{name: "not served: a verdict", rules: widgets, wantCode: 1,
			wantRows: [][]string{{"cms", "cm", "configmaps.v1", "ok"}, {"widgets", "widgets.example.com", "-", "not", "found"}}},
		{name: "forbidden: a verdict", rules: cms, server: fakeAPIServer{denied: []string{"patch", "watch"}}, wantCode: 1,
			wantRows: [][]string{{"cms", "cm", "configmaps.v1", "forbidden:", "cannot", "watch,", "patch"}}},
		{name: "literal namespaces: written there", rules: inAB, server: fakeAPIServer{deniedIn: []string{""}}, wantCode: 1,
			wantRows: [][]string{{"cms", "cm", "configmaps.v1", "forbidden:", "cannot", "list,", "watch"}}},
		{name: "literal namespaces: each asked", rules: inAB, server: fakeAPIServer{deniedIn: []string{"b"}}, wantCode: 1,
			wantRows: [][]string{{"cms", "cm", "configmaps.v1", "forbidden:", "cannot", "get", "in", "b,", "patch", "in", "b"}}},
		{name: "no admission policies: said, no verdict on them", rules: cms, server: fakeAPIServer{noAdmissionPolicies: true}, wantCode: 0,
			wantRows:   [][]string{{"cms", "cm", "configmaps.v1", "ok"}},
			wantStderr: []string{"Kubernetes 1.36 and later", "this API server (v1.35.4) does not serve it"}},
		{name: "discovery fails: no verdict", rules: widgets, server: fakeAPIServer{discoveryDown: true}, wantCode: 2,
			wantStderr: []string{"error: API server http://127.0.0.1:", ": etcd is down\n" + offlineHint}},
		{name: "access reviews fail: no verdict", rules: cms, server: fakeAPIServer{reviewsDown: true}, wantCode: 2,
			wantStderr: []string{`rule "cms": could not ask the API server: review access to get configmaps.v1: `, "etcd is down", offlineHint}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(&tc.server)
			t.Cleanup(srv.Close)
			path := filepath.Join(t.TempDir(), "rules.yaml")
			if err := os.WriteFile(path, []byte(tc.rules), 0o600); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := invoke("kube-annotator", "check", "--rules", path, "--server", srv.URL)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d", code, tc.wantCode)
			}
			for _, row := range tc.wantRows {
				if !hasRow(stdout, row) {
					t.Errorf("stdout lacks the row %q", row)
				}
			}
			if tc.wantRows == nil && stdout != "" {
				t.Errorf("stdout %q, want none: there is no verdict", stdout)
			}
			for _, want := range tc.wantStderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q", want)
				}
			}
			if tc.wantStderr == nil && stderr != "" {
				t.Errorf("stderr %q, want none", stderr)
			}
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
		})
	}
}

// hasRow reports whether a line of table starts with cells.
func hasRow(table string, cells []string) bool {
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) >= len(cells) && slices.Equal(f[:len(cells)], cells) {
			return true
		}
	}
	return false
}

// check --offline counts the rules in English.
func TestCheckOfflineCount(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte("rules:\n- name: a\n  resources: [pods]\n  annotations: {a: \"1\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if stdout, stderr, code := invoke("kube-annotator", "check", "--offline", "--rules", path); code != 0 || stdout != path+": valid (1 rule)\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 0 and %q", code, stdout, stderr, path+": valid (1 rule)\n")
	}
}

func TestCheckWarnsOfOverlaps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	content := "rules:\n- {name: web, resources: [configmaps], selector: app=web, annotations: {team: web}}\n" +
		"- {name: front, resources: [configmaps], selector: tier=front, annotations: {team: front}}\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := invoke("kube-annotator", "check", "--offline", "--rules", path)
	want := "warning: " + path + `: rules[1]: rules web and front may both select configmaps and want different things of annotation "team"`
	if code != 0 || !strings.Contains(stderr, want) || !strings.Contains(stdout, "valid (2 rules)") {
		t.Errorf("check --offline: exit %d, stdout %q, stderr %q; want exit 0 and the warning %q", code, stdout, stderr, want)
	}
}

// check warns, at its line, of a label whose value read may be no valid
// label value and that gives no ifInvalid, in text and in -o json; a
// warning does not fail the check.
func TestCheckWarnsOfInvalidLabelValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	content := "rules:\n- name: web\n  resources: [configmaps]\n  labels:\n    owner: {fromNamespace: {annotation: example.com/owner}}\n" +
		"    team: {fromNamespace: {label: team}}\n    name: {jsonPath: '{.metadata.name}', ifInvalid: hash}\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := invoke("kube-annotator", "check", "--offline", "--rules", path)
	want := "warning: " + path + `:5: rules[0].labels.owner: rule "web": label "owner" is copied from the annotation "example.com/owner" of the namespace, ` +
		"which may yield no valid label value (at most 63 letters, digits, '-', '_' and '.'), and the label is then not set; " +
		"add ifInvalid: truncate, sanitize or hash to make such a value valid\n"
	if code != 0 || stderr != want || stdout != path+": valid (1 rule)\n" {
		t.Errorf("check --offline: exit %d, stdout %q, stderr %q; want exit 0 and the warning %q", code, stdout, stderr, want)
	}
	stdout, _, code = invoke("kube-annotator", "check", "--offline", "-o", "json", "--rules", path)
	var report check.Report
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("exit %d, stdout is not a report: %v\n%s", code, err, stdout)
	}
	if p := report.Problems; code != 0 || !report.OK || len(p) != 1 || p[0].Severity != check.SeverityWarning || p[0].Line != 5 || p[0].Path != "rules[0].labels.owner" {
		t.Errorf("check --offline -o json: exit %d, %+v; want exit 0, ok, and one warning at line 5", code, report)
	}
}
