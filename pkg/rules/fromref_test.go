package rules_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/verdict"
)

// Resources of the fromRef tests, as a cluster serves them.
var (
	persistentVolumes = source.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}, Kind: "PersistentVolume"}
	claims            = source.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, Kind: "PersistentVolumeClaim", Namespaced: true}
	configMaps        = source.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}
)

// TestParseFromRef checks the {fromRef: {…}} form: a field or a name,
// the names that bound a ConfigMap's, the keys it reads, and the errors,
// each at its line, of what it refuses.
func TestParseFromRef(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     *rulefile.Refs
		kind     string
		errs     []string
	}{
		{name: "a claim by a reference", in: "{team: {fromRef: {resource: persistentvolumeclaims, field: spec.claimRef, label: team}}}",
			want: &rulefile.Refs{Resource: "persistentvolumeclaims", Field: []string{"spec", "claimRef"}}, kind: "label"},
		{name: "a ConfigMap by name", in: "{owner: {fromRef: {resource: configmaps, name: team-defaults, data: owner}}}",
			want: &rulefile.Refs{Resource: "configmaps", Name: "team-defaults"}, kind: "data"},
		{name: "a ConfigMap by a field, names bounded", in: "{owner: {fromRef: {resource: cm, field: spec.settings, names: [a, b], annotation: example.com/owner}}}",
			want: &rulefile.Refs{Resource: "configmaps", Field: []string{"spec", "settings"}, Names: []string{"a", "b"}}, kind: "annotation"},
		{name: "a claim named with its version is read as the resource", in: "{team: {fromRef: {resource: persistentvolumeclaims.v1, field: spec.claimRef, label: team}}}",
			want: &rulefile.Refs{Resource: "persistentvolumeclaims", Field: []string{"spec", "claimRef"}}, kind: "label"},
		{name: "Secrets are refused", in: "{team: {fromRef: {resource: secrets, name: s, label: team}}}", errs: []string{
			`rules.yaml:4: rules[0].labels.team.fromRef.resource: fromRef does not read "secrets": Secrets are never read: …`}},
		{name: "another resource is refused", in: "{team: {fromRef: {resource: services, name: s, label: team}}}", errs: []string{
			`rules.yaml:4: rules[0].labels.team.fromRef.resource: fromRef reads persistentvolumeclaims or configmaps; "services" is not one of them`}},
		{name: "a ConfigMap by a field without names", in: "{owner: {fromRef: {resource: configmaps, field: spec.x, data: owner}}}", errs: []string{
			`rules.yaml:4: rules[0].labels.owner.fromRef: must give names: [NAME, …only configmaps of those names are cached, never every one`}},
		{name: "data of a claim", in: "{team: {fromRef: {resource: pvc, field: spec.claimRef, data: team}}}", errs: []string{
			`rules.yaml:4: rules[0].labels.team.fromRef: reads data of persistentvolumeclaims, which have none: read a label or an annotation`}},
		{name: "both field and name, two keys", in: "{team: {fromRef: {resource: pvc, field: spec.claimRef, name: x, label: team, annotation: a}}}", errs: []string{
			`rules.yaml:4: rules[0].labels.team.fromRef: must give either field: PATH, …`,
			`rules.yaml:4: rules[0].labels.team.fromRef: gives label and annotation; read one key of the object referred to`}},
		{name: "a bad field and a bad name", in: "{team: {fromRef: {resource: configmaps, field: 'spec[0]', names: [Bad], label: team}}}", errs: []string{
			`rules.yaml:4: rules[0].labels.team.fromRef.field: invalid field "spec[0]": …`,
			`rules.yaml:4: rules[0].labels.team.fromRef.names[0]: invalid name "Bad": …`}},
		{name: "no resource", in: "{team: {fromRef: {name: x, label: team}}}", errs: []string{
			`rules.yaml:4: rules[0].labels.team.fromRef: must name the resource of the object read: resource: persistentvolumeclaims or configmaps`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := rules.Parse("rules.yaml", []byte("rules:\n- name: r\n  resources: [persistentvolumes]\n  labels: "+tc.in+"\n"))
			if tc.errs != nil {
				checkLines(t, err, tc.errs)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range f.Rules[0].Labels.FromRelated {
				if k.Source != source.Ref || k.Kind != tc.kind || !reflect.DeepEqual(k.Refs, tc.want) {
					t.Errorf("got %+v (refs %+v), want source.Ref, kind %s and refs %+v", k, k.Refs, tc.kind, tc.want)
				}
			}
		})
	}
}

// compileRefs compiles content for a cluster that serves Pods,
// PersistentVolumes, their claims and ConfigMaps, and returns the
// target of res.
func compileRefs(t *testing.T, content string, res source.Resource) *rules.Target {
	t.Helper()
	f, err := rules.Parse("rules.yaml", []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	set, unresolved, err := rules.Compile("rules.yaml", f, func(name string) (source.Resource, error) {
		for _, r := range []source.Resource{rulestest.Pods, persistentVolumes, claims, configMaps} {
			if r.GVR.Resource == name {
				return r, nil
			}
		}
		return source.Resource{}, fmt.Errorf("the server does not serve %q", name)
	})
	if err != nil || len(unresolved) > 0 {
		t.Fatal(err, unresolved)
	}
	return set.Targets[res.GVR]
}

// object is an object of fields, as a cache of whole objects keeps it.
func object(ns, name, uid string, labels map[string]any, fields map[string]any) *unstructured.Unstructured {
	md := map[string]any{"name": name, "uid": uid, "labels": labels}
	if ns != "" {
		md["namespace"] = ns
	}
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": md}}
	for k, v := range fields {
		u.Object[k] = v
	}
	return u
}

// refsLookup finds objects among objs, by source, namespace and name.
type refsLookup map[*source.Source][]metav1.Object

func (l refsLookup) Find(src *source.Source, ns, name string) (metav1.Object, bool) {
	for _, o := range l[src] {
		if o.GetNamespace() == ns && o.GetName() == name {
			return o, true
		}
	}
	return nil, false
}

// TestEvaluateFromRef checks the values a PersistentVolume reads from its
// claim, and a Pod from a ConfigMap: a UID that no longer matches, a
// namespaced object that names another namespace, a name the rule does not
// bound, and what explain says of each.
func TestEvaluateFromRef(t *testing.T) {
	claimRef := func(ns, name, uid string) map[string]any {
		return map[string]any{"claimRef": map[string]any{"kind": "PersistentVolumeClaim", "namespace": ns, "name": name, "uid": uid}}
	}
	const pvRules = "rules:\n- name: team\n  resources: [persistentvolumes]\n  labels:\n    team: {fromRef: {resource: persistentvolumeclaims, field: spec.claimRef, label: team}, default: none}\n"
	claim := object("shop", "data", "c-1", map[string]any{"team": "payments"}, nil)
	pvcs := source.RefTo(claims, []string{"spec", "claimRef"}, "")
	const cmRules = "rules:\n- name: owner\n  resources: [pods]\n  labels:\n    owner: {fromRef: {resource: configmaps, field: spec.settings, names: [team-a, team-b], data: owner}, default: none}\n"
	cm := object("shop", "team-a", "cm-1", nil, map[string]any{"data": map[string]any{"owner": "alice"}})
	cmOther := object("web", "team-a", "cm-2", nil, map[string]any{"data": map[string]any{"owner": "bob"}})
	cms := source.RefTo(configMaps, []string{"spec", "settings"}, "team-a")
	look := refsLookup{pvcs: {claim}, cms: {cm, cmOther}}
	for _, tc := range []struct {
		name               string
		rules              string
		res                source.Resource
		obj                metav1.Object
		want               string
		wantInput, wantWhy string
	}{
		{name: "the claim named, UID matching", rules: pvRules, res: persistentVolumes,
			obj:  object("", "pv-1", "v-1", nil, map[string]any{"spec": claimRef("shop", "data", "c-1")}),
			want: "payments", wantInput: `label "team" of PersistentVolumeClaim "shop/data"`},
		{name: "a claim of another UID is missing", rules: pvRules, res: persistentVolumes,
			obj:  object("", "pv-2", "v-2", nil, map[string]any{"spec": claimRef("shop", "data", "c-old")}),
			want: "none", wantWhy: `PersistentVolumeClaim "shop/data" is not the object referred to: its UID is c-1, the reference names c-old`},
		{name: "a volume not bound", rules: pvRules, res: persistentVolumes, obj: object("", "pv-3", "v-3", nil, nil),
			want: "none", wantWhy: "the object names no PersistentVolumeClaim in spec.claimRef"},
		{name: "a reference without a namespace", rules: pvRules, res: persistentVolumes,
			obj:  object("", "pv-4", "v-4", nil, map[string]any{"spec": map[string]any{"claimRef": map[string]any{"name": "data"}}}),
			want: "none", wantWhy: `cluster-scoped and names PersistentVolumeClaim "data" without a namespace`},
		{name: "a ConfigMap's data", rules: cmRules, res: rulestest.Pods,
			obj:  object("shop", "p-1", "p-1", nil, map[string]any{"spec": map[string]any{"settings": "team-a"}}),
			want: "alice", wantInput: `data "owner" of ConfigMap "shop/team-a"`},
		{name: "a name the rule does not give", rules: cmRules, res: rulestest.Pods,
			obj:  object("shop", "p-2", "p-2", nil, map[string]any{"spec": map[string]any{"settings": "team-c"}}),
			want: "none", wantWhy: `spec.settings names ConfigMap "team-c", which is not among the names the rule gives (names)`},
		{name: "no name in the field", rules: cmRules, res: rulestest.Pods, obj: object("shop", "p-4", "p-4", nil, nil),
			want: "none", wantWhy: "the object names no ConfigMap in spec.settings"},
		{name: "another namespace is not read", rules: cmRules, res: rulestest.Pods,
			obj:  object("shop", "p-3", "p-3", nil, map[string]any{"spec": map[string]any{"settings": map[string]any{"namespace": "web", "name": "team-a"}}}),
			want: "none", wantWhy: `ConfigMap "team-a" is in namespace "web": an object refers only to objects of its own namespace ("shop")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := compileRefs(t, tc.rules, tc.res)
			key := "team"
			if tc.rules == cmRules {
				key = "owner"
			}
			ev := tg.Evaluate(tc.obj, look)
			if got := ev.Desired.Labels[key]; got != tc.want {
				t.Errorf("label %s = %q, want %q (problems %q)", key, got, tc.want, ev.Problems)
			}
			v := tg.Explain(tc.obj, look)
			i := slices.IndexFunc(v[0].Wants, func(w verdict.Want) bool { return w.Key == key })
			if i < 0 || v[0].Wants[i].Input != tc.wantInput || !strings.Contains(v[0].Wants[i].Defaulted, tc.wantWhy) {
				t.Errorf("Explain() wants %+v; want %s read from %q, or defaulted as %q", v[0].Wants, key, tc.wantInput, tc.wantWhy)
			}
		})
	}
}

// TestFromRefNeeds checks what a rule reading a claim needs: the field
// that names it kept, one source per resource, field and name, and which
// changes of the claim matter.
func TestFromRefNeeds(t *testing.T) {
	tg := compileRefs(t, "rules:\n- name: team\n  resources: [persistentvolumes]\n  labels:\n    team: {fromRef: {resource: persistentvolumeclaims, field: spec.claimRef, label: team}}\n", persistentVolumes)
	pvcs := source.RefTo(claims, []string{"spec", "claimRef"}, "")
	if got := tg.Sources(); !slices.Equal(got, []*source.Source{pvcs}) {
		t.Errorf("Sources() = %v, want the claims named by spec.claimRef", got)
	}
	if p := tg.Projection(); !p.Whole || !slices.ContainsFunc(p.Fields, func(f []string) bool { return slices.Equal(f, []string{"spec", "claimRef"}) }) {
		t.Errorf("Projection() = %+v, want whole objects keeping spec.claimRef", p)
	}
	if pvcs != source.RefTo(claims, []string{"spec", "claimRef"}, "") || pvcs == source.RefTo(claims, []string{"spec", "other"}, "") {
		t.Error("RefTo returned two sources for one resource and field, or one for two fields")
	}
	a := object("shop", "data", "c-1", map[string]any{"team": "a", "tier": "x"}, nil)
	for _, tc := range []struct {
		name string
		new  metav1.Object
		want bool
	}{
		{"the label read", object("shop", "data", "c-1", map[string]any{"team": "b", "tier": "x"}, nil), true},
		{"another label", object("shop", "data", "c-1", map[string]any{"team": "a", "tier": "y"}, nil), false},
	} {
		if got := tg.SourceChangeMatters(pvcs, a, tc.new); got != tc.want {
			t.Errorf("%s: SourceChangeMatters() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestFromRefClusterScopedByName checks that a rule on a cluster-scoped
// resource that reads a namespaced object by name, which it has no
// namespace to find in, is refused at its line, as is a copy from one,
// and that one reading it through a reference is not.
func TestFromRefClusterScopedByName(t *testing.T) {
	const byName = "rules:\n- name: v\n  resources: [persistentvolumes]\n  labels:\n    team: {fromRef: {resource: configmaps, name: defaults, data: team}}\n"
	f, err := rules.Parse("rules.yaml", []byte(byName))
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(name string) (source.Resource, error) {
		for _, r := range []source.Resource{persistentVolumes, claims, configMaps} {
			if r.GVR.Resource == name {
				return r, nil
			}
		}
		return source.Resource{}, fmt.Errorf("the server does not serve %q", name)
	}
	_, _, err = rules.Compile("rules.yaml", f, resolve)
	checkLines(t, err, []string{`rules.yaml:5: rules[0].labels.team.fromRef.name: persistentvolumes are cluster-scoped: they have no namespace to find ConfigMap "defaults" in; …`})
	const copyByName = "rules:\n- name: v\n  resources: [persistentvolumes]\n  copy:\n  - fromRef: {resource: persistentvolumeclaims, name: data, labels: ['*']}\n"
	if f, err = rules.Parse("rules.yaml", []byte(copyByName)); err != nil {
		t.Fatal(err)
	}
	_, _, err = rules.Compile("rules.yaml", f, resolve)
	checkLines(t, err, []string{`rules.yaml:5: rules[0].copy[0].fromRef.name: persistentvolumes are cluster-scoped: they have no namespace to find PersistentVolumeClaim "data" in; …`})
	compileRefs(t, "rules:\n- name: v\n  resources: [persistentvolumes]\n  labels:\n    team: {fromRef: {resource: persistentvolumeclaims, field: spec.claimRef, label: team}}\n", persistentVolumes)
}

// TestEvaluateCopyFromRef checks a key set copied from the object a field
// names: a PersistentVolume gets every label of its claim but those
// excepted, reads the claims through the field, re-reads on a change of
// a label it copies, and says why it copies nothing from a claim of
// another UID.
func TestEvaluateCopyFromRef(t *testing.T) {
	tg := compileRefs(t, "rules:\n- name: claim-labels\n  resources: [persistentvolumes]\n  copy:\n"+
		"  - fromRef: {resource: persistentvolumeclaims, field: spec.claimRef, labels: [\"*\"], except: [internal-*]}\n", persistentVolumes)
	pvcs := source.RefTo(claims, []string{"spec", "claimRef"}, "")
	if got := tg.Sources(); !slices.Equal(got, []*source.Source{pvcs}) {
		t.Fatalf("Sources() = %v, want the claims named by spec.claimRef", got)
	}
	claim := object("shop", "data", "c-1", map[string]any{"team": "payments", "tier": "db", "internal-id": "7"}, nil)
	look := refsLookup{pvcs: {claim}}
	pv := func(uid string) metav1.Object {
		return object("", "pv-1", "v-1", nil, map[string]any{"spec": map[string]any{"claimRef": map[string]any{"namespace": "shop", "name": "data", "uid": uid}}})
	}
	ev := tg.Evaluate(pv("c-1"), look)
	if want := map[string]string{"team": "payments", "tier": "db"}; !reflect.DeepEqual(ev.Desired.Labels, want) {
		t.Errorf("labels = %v, want %v (problems %q)", ev.Desired.Labels, want, ev.Problems)
	}
	ev = tg.Evaluate(pv("c-old"), look)
	if len(ev.Desired.Labels) > 0 || len(ev.Problems) != 1 || !strings.Contains(ev.Problems[0], "is not the object referred to") {
		t.Errorf("a claim of another UID: labels %v, problems %q; want none, and why", ev.Desired.Labels, ev.Problems)
	}
	relabelled := object("shop", "data", "c-1", map[string]any{"team": "checkout", "tier": "db", "internal-id": "7"}, nil)
	internal := object("shop", "data", "c-1", map[string]any{"team": "payments", "tier": "db", "internal-id": "8"}, nil)
	if !tg.SourceChangeMatters(pvcs, claim, relabelled) || tg.SourceChangeMatters(pvcs, claim, internal) {
		t.Errorf("SourceChangeMatters: a copied label changed %v, an excepted one %v; want true, false",
			tg.SourceChangeMatters(pvcs, claim, relabelled), tg.SourceChangeMatters(pvcs, claim, internal))
	}
}
