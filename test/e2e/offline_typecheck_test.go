package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/client-go/discovery"

	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// testOfflineSchemas compares the schema of every built-in resource the
// server serves, and of the Frigate, resolved offline with what the
// server publishes, less descriptions.
func testOfflineSchemas(t *testing.T) {
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	served, err := dc.ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	on := resolve.New(dc)
	off, err := resolve.NewOffline("", h.CRDFile())
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for gvr, r := range indexResources(served) {
		if _, err := off.Resolve(source.GVRString(gvr)); err != nil {
			continue // what no rule can name offline, such as bindings
		}
		res := source.Resource{GVR: gvr, Kind: r.Kind, Namespaced: r.Namespaced}
		want, err := on.Schema(res)
		if err != nil || want == nil {
			t.Errorf("online Schema(%s) = %v, %v", source.GVRString(gvr), want, err)
			continue
		}
		got, err := off.Schema(res)
		if err != nil {
			t.Errorf("offline Schema(%s): %v", source.GVRString(gvr), err)
			continue
		}
		if a, b := withoutDescriptions(t, got), withoutDescriptions(t, want); a != b {
			t.Errorf("schema of %s offline differs from the server's\noffline: %.2000s\nserver:  %.2000s", source.GVRString(gvr), a, b)
		}
		compared++
	}
	if compared < 50 {
		t.Errorf("%d schemas compared, want the server's every resource", compared)
	}
}

// withoutDescriptions returns the JSON of v without the descriptions of
// its schemas.
func withoutDescriptions(t *testing.T, v any) string {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(js, &generic); err != nil {
		t.Fatal(err)
	}
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["description"].(string); ok {
				delete(v, "description")
			}
			for _, e := range v {
				strip(e)
			}
		case []any:
			for _, e := range v {
				strip(e)
			}
		}
	}
	strip(generic)
	out, err := json.Marshal(generic)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// testOfflineTypeCheck runs check on the cluster and check --offline on
// the same rules files, good and bad, over built-in resources and the
// Frigate: both give the same verdict, and the same errors and warnings.
func testOfflineTypeCheck(t *testing.T) {
	const rule = "rules:\n- name: r\n  resources: [%s]\n%s"
	for _, tc := range []struct {
		name, resources, in string
		valid               bool
	}{
		{name: "a typo in a Deployment's field", resources: "deployments", in: "  when: object.spec.replicass > 2\n  labels: {a: b}\n"},
		{name: "a label value that yields an int", resources: "deployments", in: "  labels:\n    n: {cel: object.spec.replicas}\n"},
		{name: "a Deployment's fields", resources: "deploy", valid: true,
			in: "  when: \"object.spec.replicas > 2 && object.spec.template.spec.containers.exists(c, c.image.startsWith('nginx'))\"\n  labels:\n    n: {cel: string(object.spec.replicas)}\n"},
		{name: "a Pod's fields", resources: "pods", valid: true,
			in: "  when: \"object.spec.nodeName != '' && object.metadata.?labels[?'team'].orValue('') == 'a'\"\n  annotations:\n    image: {cel: 'object.spec.containers[0].image'}\n"},
		{name: "a Pod's misspelt field", resources: "pods", in: "  annotations:\n    image: {cel: 'object.spec.containers[0].imag'}\n"},
		{name: "a map's value compared to an int", resources: "configmaps", in: "  when: object.data.size > 2\n  labels: {a: b}\n"},
		{name: "an open field stays dyn", resources: "controllerrevisions", valid: true, in: "  when: object.data.anything.deep > 2\n  labels: {a: b}\n"},
		{name: "a CronJob and a Job", resources: "cronjobs, jobs", in: "  when: object.spec.schedule != ''\n  labels: {a: b}\n"},
		{name: "a Node's and a Namespace's labels", resources: "nodes, namespaces", valid: true, in: "  when: \"object.metadata.?labels[?'zone'].orValue('') == 'a'\"\n  labels: {a: b}\n"},
		{name: "a Frigate's fields", resources: "frigates.ship.nwiizo.dev", valid: true,
			in: "  when: \"object.spec.foo == 'x' && object.status.conditions.exists(c, c.type == 'Ready')\"\n  annotations:\n    n: {cel: object.metadata.name}\n"},
		{name: "a Frigate's misspelt field", resources: "frigate", in: "  when: object.spec.fooo == 'x'\n  labels: {a: b}\n"},
		{name: "a Frigate's metadata", resources: "frigates", in: "  when: object.metadata.nme == 'x'\n  labels: {a: b}\n"},
		{name: "several errors, each at its line", resources: "deployments, frigates",
			in: "  when: object.spec.replicas > 2\n  labels:\n    n: {cel: object.spec.foo}\n    m: {cel: object.metadata.generation}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "rules.yaml", fmt.Sprintf(rule, tc.resources, tc.in))
			stdout, stderr, code := runCLI(t, "check", "--rules", path, "--kubeconfig", env.Kubeconfig)
			if want := map[bool]int{true: 0, false: 1}[tc.valid]; code != want || !tc.valid && !strings.Contains(stderr, "does not type-check") {
				t.Fatalf("check: exit %d, want %d\n%s%s", code, want, stdout, stderr)
			}
			// Their stdout differs: online, check reports what the
			// cluster serves each resource as.
			offStdout, offStderr, offCode := runCLI(t, "check", "--offline", "--crd", h.CRDFile(), "--rules", path)
			if offCode != code || offStderr != stderr {
				t.Errorf("check --offline: exit %d\n%s%s\ncheck: exit %d\n%s%s", offCode, offStdout, offStderr, code, stdout, stderr)
			}
		})
	}
}
