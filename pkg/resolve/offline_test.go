package resolve

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/staticdiscovery"
)

// frigateCRD is the repository's Kubebuilder CRD.
var frigateCRD = filepath.Join("..", "..", "deploy", "crd", "ship.nwiizo.dev_frigates.yaml")

func TestResolveOffline(t *testing.T) {
	withCRD, err := NewOffline("--crd", frigateCRD)
	if err != nil {
		t.Fatal(err)
	}
	builtInOnly, err := NewOffline("--crd")
	if err != nil {
		t.Fatal(err)
	}
	// unnamed is told no name for how CRD files are given.
	unnamed, err := NewOffline("")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		r          *Resolver
		want       string // resource.version.group
		namespaced bool
		wantErr    string
	}{
		{name: "cm", r: builtInOnly, want: "configmaps.v1", namespaced: true},
		{name: "pod", r: builtInOnly, want: "pods.v1", namespaced: true},
		{name: "deploy", r: builtInOnly, want: "deployments.v1.apps", namespaced: true},
		{name: "deployments.apps", r: builtInOnly, want: "deployments.v1.apps", namespaced: true},
		{name: "deployments.v1.apps", r: builtInOnly, want: "deployments.v1.apps", namespaced: true},
		{name: "hpa", r: builtInOnly, want: "horizontalpodautoscalers.v2.autoscaling", namespaced: true},
		{name: "horizontalpodautoscalers.v1.autoscaling", r: builtInOnly, want: "horizontalpodautoscalers.v1.autoscaling", namespaced: true},
		{name: "events", r: builtInOnly, want: "events.v1", namespaced: true},
		{name: "events.events.k8s.io", r: builtInOnly, want: "events.v1.events.k8s.io", namespaced: true},
		{name: "ns", r: builtInOnly, want: "namespaces.v1"},
		{name: "crd", r: builtInOnly, want: "customresourcedefinitions.v1.apiextensions.k8s.io"},
		{name: "apiservices", r: builtInOnly, want: "apiservices.v1.apiregistration.k8s.io"},
		{name: "frigates.ship.nwiizo.dev", r: withCRD, want: "frigates.v1beta1.ship.nwiizo.dev", namespaced: true},
		{name: "frigate", r: withCRD, want: "frigates.v1beta1.ship.nwiizo.dev", namespaced: true},
		{name: "frigates.ship.nwiizo.dev", r: builtInOnly,
			wantErr: `resource "frigates.ship.nwiizo.dev" is not built into Kubernetes ` + staticdiscovery.KubeVersion() + ` and no --crd file defines it (a typo, or a CRD whose file is not given with --crd?)`},
		{name: "deploymnets", r: builtInOnly, wantErr: `(did you mean "deployments"?)`},
		{name: "frigates.ship.nwiizo.dve", r: withCRD, wantErr: `(did you mean "frigates.ship.nwiizo.dev"?)`},
		{name: "deployments.v2.apps", r: builtInOnly, wantErr: `(did you mean "deployments.v1.apps"?)`},
		{name: "pox", r: builtInOnly, wantErr: `(did you mean "pod"?)`},
		{name: "xyz", r: builtInOnly, wantErr: `no --crd file defines it (a typo`},
		{name: "xyz", r: unnamed, wantErr: `and no CRD file given defines it (a typo, or a CRD whose file is not given?)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.r.Resolve(tc.name)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrNotServed) {
					t.Fatalf("Resolve(%q) = %v, %v; want ErrNotServed containing %q", tc.name, got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.name, err)
			}
			if s := source.GVRString(got.GVR); s != tc.want || got.Namespaced != tc.namespaced {
				t.Errorf("Resolve(%q) = %s namespaced=%v, want %s namespaced=%v", tc.name, s, got.Namespaced, tc.want, tc.namespaced)
			}
		})
	}
}

// A CRD file that cannot be read fails NewOffline, naming the file.
func TestNewOfflineBadCRD(t *testing.T) {
	_, err := NewOffline("--crd", frigateCRD, "no-such-crd.yaml")
	if err == nil || !strings.Contains(err.Error(), "no-such-crd.yaml") {
		t.Errorf("NewOffline() error = %v, want it to name the file", err)
	}
}

// Offline, Compile finds what only resolving names shows: conflicts
// between rules that apply to every object, and cycles and conditions on
// each other's keys between rules that name one resource in two ways.
func TestCompileOffline(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string
	}{
		{name: "one key, two values, on every pod",
			content: "rules:\n- {name: team-a, resources: [pods], annotations: {team: a}}\n- {name: team-b, resources: [po], annotations: {team: b}}\n",
			want:    []string{"rules[1].annotations.team: conflicts with rules[0] (team-a), which also applies to every object of pods.v1", "(team-b)"}},
		{name: "short and long names",
			content: "rules:\n- {name: web, resources: [deploy], annotations: {team: web}}\n- {name: db, resources: [deployments.v1.apps], annotations: {team: db}}\n",
			want:    []string{"rules[1].annotations.team: conflicts with rules[0] (web)", "deployments.v1.apps"}},
		{name: "a cycle through two names",
			content: "rules:\n- {name: a, resources: [deploy], selector: '!x', labels: {y: '1'}}\n" +
				"- {name: b, resources: [deployments.v1.apps], selector: '!y', labels: {x: '1'}}\n",
			want: []string{`rules[0].selector: tests label "x", set by rules[1] (b)`}},
		{name: "a condition on a key set through another name",
			content: "rules:\n- {name: a, resources: [deploy], when: \"!has(object.metadata.labels.x)\", annotations: {y: '1'}}\n" +
				"- {name: b, resources: [deployments.v1.apps], labels: {x: '1'}}\n",
			want: []string{`rules[0].when: "!has(object.metadata.labels.x)" reads label/x, which rules[1] (b) sets`}},
		{name: "a custom resource",
			content: "rules:\n- {name: a, resources: [frigates.ship.nwiizo.dev], annotations: {k: a}}\n- {name: b, resources: [frigate], annotations: {k: b}}\n",
			want:    []string{"conflicts with rules[0] (a)", "frigates.v1beta1.ship.nwiizo.dev"}},
	}
	r, err := NewOffline("--crd", frigateCRD)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file, err := rules.Parse("rules.yaml", []byte(tc.content))
			if err != nil {
				t.Fatal(err)
			}
			set, unresolved, err := Compile("rules.yaml", file, r.Resolve, nil, nil)
			if set != nil || len(unresolved) > 0 || err == nil {
				t.Fatalf("Compile() = %v, %v, %v; want a conflict", set, unresolved, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Compile() error = %v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

// TestSchemaOffline checks that a Resolver that asks no server returns
// the schemas a server would publish: a built-in resource's from
// staticdiscovery's copy, its references resolved; a custom resource's
// from the CRD file, with the metadata of every object; nothing for a
// group-version no server serves a document for, or no CRD file defines.
func TestSchemaOffline(t *testing.T) {
	off, err := NewOffline("--crd", frigateCRD)
	if err != nil {
		t.Fatal(err)
	}
	builtInOnly, err := NewOffline("--crd")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		r    *Resolver
		name string
		path []string // a path of properties the schema has
		want string   // the type at path; "" for no schema
	}{
		{r: off, name: "deployments", path: []string{"spec", "replicas"}, want: "integer"},
		{r: off, name: "deployments", path: []string{"spec", "template", "spec", "containers"}, want: "array"},
		{r: off, name: "pods", path: []string{"metadata", "labels"}, want: "object"},
		{r: off, name: "cronjobs", path: []string{"spec", "schedule"}, want: "string"},
		{r: off, name: "customresourcedefinitions", path: []string{"spec", "group"}, want: "string"},
		{r: off, name: "apiservices", path: []string{"spec", "service"}, want: "object"},
		{r: off, name: "frigates", path: []string{"spec", "foo"}, want: "string"},
		{r: off, name: "frigates", path: []string{"metadata", "name"}, want: "string"},
		{r: off, name: "frigates", path: []string{"apiVersion"}, want: "string"},
		{r: builtInOnly, name: "runtimeclasses.v1alpha1.node.k8s.io"}, // not served by Kubernetes, known to typed clients
	}
	for _, tc := range tests {
		t.Run(tc.name+"."+strings.Join(tc.path, "."), func(t *testing.T) {
			res, err := tc.r.Resolve(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			s, err := tc.r.Schema(res)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if s != nil {
					t.Fatalf("Schema(%s) = %v, want none", tc.name, s.Type)
				}
				return
			}
			if s == nil {
				t.Fatalf("Schema(%s) = nil, want a schema", tc.name)
			}
			for _, p := range tc.path {
				prop, ok := s.Properties[p]
				if !ok {
					t.Fatalf("Schema(%s) has no %s in %s", tc.name, p, strings.Join(tc.path, "."))
				}
				s = &prop
			}
			if got := strings.Join(s.Type, ","); got != tc.want {
				t.Errorf("Schema(%s).%s is of type %q, want %q", tc.name, strings.Join(tc.path, "."), got, tc.want)
			}
		})
	}
}
