package staticdiscovery

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// frigateCRD is the repository's Kubebuilder CRD.
var frigateCRD = filepath.Join("..", "..", "deploy", "crd", "ship.nwiizo.dev_frigates.yaml")

// crd is a CRD document: a cluster-scoped widgets.example.com served at
// v1 and v2alpha1, and stored at v1beta1, which is not served; replace
// rewrites it for a test.
func crd(replace ...string) string {
	doc := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {plural: widgets, kind: Widget, shortNames: [wd], categories: [all]}
  scope: Cluster
  versions:
  - {name: v2alpha1, served: true, storage: false}
  - {name: v1, served: true, storage: false}
  - {name: v1beta1, served: false, storage: true}
`
	return strings.NewReplacer(replace...).Replace(doc)
}

// write writes content to a file named name in a new directory.
func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadCRDs(t *testing.T) {
	widgets := metav1.APIResource{Name: "widgets", SingularName: "widget", Kind: "Widget", ShortNames: []string{"wd"}, Categories: []string{"all"},
		Verbs: metav1.Verbs{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}}
	tests := []struct {
		name    string
		content string
		want    map[string][]string // group-version → resource names
	}{
		{name: "one document", content: crd(), want: map[string][]string{"example.com/v2alpha1": {"widgets"}, "example.com/v1": {"widgets"}}},
		{name: "among other kinds and empty documents", content: "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n---\n" + crd() + "---\n# nothing\n",
			want: map[string][]string{"example.com/v2alpha1": {"widgets"}, "example.com/v1": {"widgets"}}},
		{name: "two CRDs of one group", content: crd() + "---\n" + crd("widgets", "gadgets", "Widget", "Gadget", "[wd]", "[]"),
			want: map[string][]string{"example.com/v2alpha1": {"widgets", "gadgets"}, "example.com/v1": {"widgets", "gadgets"}}},
		{name: "a List, as kubectl prints it", content: "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSpace(crd()), "\n", "\n  ") + "\n",
			want: map[string][]string{"example.com/v2alpha1": {"widgets"}, "example.com/v1": {"widgets"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lists, _, err := ReadCRDs(write(t, "crds.yaml", tc.content))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for _, l := range lists {
				for _, r := range l.APIResources {
					got[l.GroupVersion] = append(got[l.GroupVersion], r.Name)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("ReadCRDs() = %v, want %v", got, tc.want)
			}
			for gv, names := range tc.want {
				if !slices.Equal(got[gv], names) {
					t.Errorf("ReadCRDs()[%s] = %v, want %v", gv, got[gv], names)
				}
			}
			if r, _ := find(lists, "example.com/v1", "widgets"); !equalResource(r, widgets) {
				t.Errorf("widgets = %+v, want %+v", r, widgets)
			}
		})
	}
}

func equalResource(a, b metav1.APIResource) bool {
	return a.Name == b.Name && a.SingularName == b.SingularName && a.Kind == b.Kind && a.Namespaced == b.Namespaced &&
		slices.Equal(a.Verbs, b.Verbs) && slices.Equal(a.ShortNames, b.ShortNames) && slices.Equal(a.Categories, b.Categories)
}

// The repository's CRD reads as the cluster serves it.
func TestReadCRDsFrigate(t *testing.T) {
	lists, schemas, err := ReadCRDs(frigateCRD)
	if err != nil {
		t.Fatal(err)
	}
	want := metav1.APIResource{Name: "frigates", SingularName: "frigate", Kind: "Frigate", Namespaced: true,
		Verbs: metav1.Verbs{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}}
	if r, ok := find(lists, "ship.nwiizo.dev/v1beta1", "frigates"); !ok || !equalResource(r, want) || len(lists) != 1 {
		t.Errorf("ReadCRDs(%s) = %v, want frigates %+v alone", frigateCRD, lists, want)
	}
	docs, err := schemas.Documents()
	if err != nil {
		t.Fatal(err)
	}
	const path = "apis/ship.nwiizo.dev/v1beta1"
	if got := slices.Collect(maps.Keys(docs)); !slices.Equal(got, []string{path}) {
		t.Fatalf("documents %v, want %s alone", got, path)
	}
	s := resolveFrom(t, docs[path], schema.GroupVersionKind{Group: "ship.nwiizo.dev", Version: "v1beta1", Kind: "Frigate"})
	if foo, name := s.Properties["spec"].Properties["foo"], s.Properties["metadata"].Properties["name"]; !foo.Type.Contains("string") || !name.Type.Contains("string") {
		t.Errorf("the Frigate's schema lacks a string spec.foo and metadata.name: %s", mustJSON(t, s))
	}
}

func TestReadCRDsErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    string // in the error, which starts "<file>: "
	}{
		{name: "no CRD", content: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
			want: "no CustomResourceDefinition (apiextensions.k8s.io/v1) in the file"},
		{name: "empty file", content: "", want: "no CustomResourceDefinition"},
		{name: "v1beta1", content: crd("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1"),
			want: `document 1: apiVersion: "apiextensions.k8s.io/v1beta1": only apiextensions.k8s.io/v1 is read`},
		{name: "YAML syntax", content: "apiVersion: [\n", want: "document 1: "},
		{name: "no group", content: crd("group: example.com", "group: ''"),
			want: "document 1 (CustomResourceDefinition widgets.example.com): spec.group: must be set"},
		{name: "a built-in group", content: crd("example.com", "apps"),
			want: `document 1 (CustomResourceDefinition widgets.apps): spec.group: "apps" is a built-in group`},
		{name: "no plural", content: crd("plural: widgets, ", ""), want: "spec.names.plural: must be set"},
		{name: "uppercase plural", content: crd("plural: widgets", "plural: Widgets", "name: widgets", "name: Widgets"),
			want: `spec.names.plural: "Widgets" must be lowercase`},
		{name: "no kind", content: crd("kind: Widget, ", ""), want: "spec.names.kind: must be set"},
		{name: "name and plural differ", content: crd("name: widgets.example.com", "name: gadgets.example.com"),
			want: `metadata.name: "gadgets.example.com" must be spec.names.plural and spec.group: widgets.example.com`},
		{name: "bad scope", content: crd("scope: Cluster", "scope: cluster"), want: `spec.scope: "cluster" must be Namespaced or Cluster`},
		{name: "nameless version", content: crd("name: v1,", "name: '',"), want: "spec.versions[1].name: must be set"},
		{name: "nothing served", content: crd("served: true", "served: false"), want: "spec.versions: no version is served"},
		{name: "defined twice", content: crd() + "---\n" + crd("wd", "w"),
			want: "document 2 (CustomResourceDefinition widgets.example.com): widgets.example.com is defined twice, also at "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, "crds.yaml", tc.content)
			_, _, err := ReadCRDs(path)
			if err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadCRDs() error = %v, want %q", err, path+": …"+tc.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		if _, _, err := ReadCRDs("no-such-file.yaml"); err == nil || !strings.Contains(err.Error(), "no-such-file.yaml") {
			t.Errorf("ReadCRDs() error = %v, want it to name the file", err)
		}
	})
	t.Run("defined in two files", func(t *testing.T) {
		a, b := write(t, "a.yaml", crd()), write(t, "b.yaml", crd())
		_, _, err := ReadCRDs(a, b)
		if err == nil || !strings.HasPrefix(err.Error(), b+": document 1") || !strings.Contains(err.Error(), "also at "+a+": document 1") {
			t.Errorf("ReadCRDs() error = %v, want it to name both files", err)
		}
	})
}
