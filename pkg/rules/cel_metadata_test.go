package rules_test

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// TestCELOnMetadata checks that a resource whose CEL expressions read of
// its objects only what a metadata cache keeps is cached as metadata, that
// the cache keeps the keys they read, and that they decide on the
// metadata what they decide on the whole object.
func TestCELOnMetadata(t *testing.T) {
	whole := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "team", "uid": "u-1", "generation": int64(2),
			"labels": map[string]any{"tier": "web", "app": "shop"}, "annotations": map[string]any{"owner": "ops"}},
		"spec": map[string]any{"replicas": int64(3)}}}
	md := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", UID: "u-1",
			Labels: map[string]string{"tier": "web"}, Annotations: map[string]string{"owner": "ops"}}}
	prod := source.Namespaces(func(name string) (metav1.Object, bool) {
		return &metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": "prod"}}, true
	})
	tests := []struct {
		name, rule     string
		fields         bool
		labels, annots []string
		want           map[string]string
	}{
		{name: "label by key", rule: `when: "object.metadata.labels.tier == 'web'"`, labels: []string{"tier"},
			want: map[string]string{"size": "big"}},
		{name: "optional label", rule: `when: "object.metadata.?labels[?'tier'].orValue('') == 'db'"`, labels: []string{"tier"}},
		{name: "annotation, name, namespace, uid, kind", labels: []string{}, annots: []string{"owner"},
			rule: `when: "'owner' in object.metadata.annotations && object.metadata.uid != '' && object.kind == 'Deployment'", ` +
				`annotations: {id: {cel: "object.metadata.namespace + '/' + object.metadata.name"}}`,
			want: map[string]string{"size": "big", "id": "team/web"}},
		{name: "namespaceObject", rule: `when: "namespaceObject.metadata.labels.env == 'prod'"`, labels: []string{},
			want: map[string]string{"size": "big"}},
		{name: "spec", rule: `when: "object.spec.replicas > 2"`, fields: true, want: map[string]string{"size": "big"}},
		{name: "other metadata", rule: `when: "object.metadata.generation > 1"`, fields: true, want: map[string]string{"size": "big"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := rulestest.Compile(t, "rules:\n- {name: r, resources: [deployments], labels: {size: big}, "+tc.rule+"}\n", rulestest.Deployments)
			target := set.Targets[rulestest.Deployments.GVR]
			if target.ReadsObjects != tc.fields {
				t.Fatalf("ReadsObjects = %v, want %v", target.ReadsObjects, tc.fields)
			}
			got := desired(target.Evaluate(whole, prod))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("on the whole object: %v, want %v", got, tc.want)
			}
			if tc.fields {
				return
			}
			p := target.Projection()
			if !p.Labels.IsSuperset(sets.New(tc.labels...)) || !p.Annotations.IsSuperset(sets.New(tc.annots...)) {
				t.Errorf("projection keeps labels %v, annotations %v; want %v and %v", sets.List(p.Labels), sets.List(p.Annotations), tc.labels, tc.annots)
			}
			if got := desired(target.Evaluate(md, prod)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("on the metadata: %v, want %v", got, tc.want)
			}
		})
	}
}

// desired returns the annotations and labels ev wants, in one map; nil
// for none.
func desired(ev *rules.Evaluation) map[string]string {
	var out map[string]string
	for _, m := range []map[string]string{ev.Desired.Annotations, ev.Desired.Labels} {
		for k, v := range m {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// TestProjectionOfFieldsCoversKeys checks that a cache of the fields CEL
// reads, which keeps only the annotations and labels its rules name,
// cannot serve rules that name another key.
func TestProjectionOfFieldsCoversKeys(t *testing.T) {
	projection := func(rule string) projection.Projection {
		set := rulestest.Compile(t, "rules:\n- {name: r, resources: [deployments], when: 'object.spec.replicas > 2', "+rule+"}\n", rulestest.Deployments)
		return set.Targets[rulestest.Deployments.GVR].Projection()
	}
	kept := projection("labels: {size: big}, annotations: {a: b}")
	for _, tc := range []struct {
		name, rule string
		want       bool
	}{
		{"the same", "labels: {size: big}, annotations: {a: b}", true},
		{"fewer keys", "annotations: {a: b}", true},
		{"another label", "labels: {size: big, tier: web}", false},
		{"a selector", "selector: app=web, labels: {size: big}", false},
		{"another annotation", "labels: {size: big}, annotations: {c: d}", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := kept.Covers(projection(tc.rule)); got != tc.want {
				t.Errorf("Covers() = %v, want %v", got, tc.want)
			}
		})
	}
}
