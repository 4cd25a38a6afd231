package rules_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// TestParseCopy checks a rule's copy: the key sets it decodes to, and the
// errors that name the field.
func TestParseCopy(t *testing.T) {
	tests := []struct {
		name      string
		resources string
		in        string // the rule's copy
		want      rulefile.Rule
		errs      []string
	}{
		{name: "namespace labels, except some", resources: "[pods]",
			in: `[{fromNamespace: {labels: ["*"], except: [kubernetes.io/metadata.name]}}]`,
			want: rulefile.Rule{Labels: rulefile.Metadata{Copy: []rulefile.KeySet{
				{Source: source.Namespace, Kind: "label", Keys: []string{"*"}, Except: []string{"kubernetes.io/metadata.name"}}}}}},
		{name: "Node and owner, each kind to its own", resources: "[pods]",
			in: `[{fromNode: {labels: [topology.kubernetes.io/*]}}, {fromOwner: {annotations: [example.com/*], owner: deployments.apps}}]`,
			want: rulefile.Rule{
				Labels: rulefile.Metadata{Copy: []rulefile.KeySet{{Source: source.Node, Kind: "label", Keys: []string{"topology.kubernetes.io/*"}}}},
				Annotations: rulefile.Metadata{Copy: []rulefile.KeySet{{Source: source.Owner, Kind: "annotation", Keys: []string{"example.com/*"}, Item: 1,
					Owners: &rulefile.Owners{Hop: "deployments.apps", Through: source.DefaultOwners}}}}}},
		{name: "computed in CEL", resources: "[pods]", in: `[{cel: {annotations: "object.spec.containers.transformMapEntry(i, c, {'example.com/' + c.name: 'x'})"}}]`,
			want: rulefile.Rule{Annotations: rulefile.Metadata{Copy: []rulefile.KeySet{
				{Kind: "annotation", CEL: "object.spec.containers.transformMapEntry(i, c, {'example.com/' + c.name: 'x'})"}}}}},
		{name: "the claim of a volume", resources: "[persistentvolumes]",
			in: `[{fromRef: {resource: persistentvolumeclaims, field: spec.claimRef, labels: ["*"], except: [kubernetes.io/*]}}]`,
			want: rulefile.Rule{Labels: rulefile.Metadata{Copy: []rulefile.KeySet{{Source: source.Ref, Kind: "label", Keys: []string{"*"},
				Except: []string{"kubernetes.io/*"}, Refs: &rulefile.Refs{Resource: "persistentvolumeclaims", Field: []string{"spec", "claimRef"}}}}}}},
		{name: "a reference without its object", resources: "[persistentvolumes]", in: `[{fromRef: {resource: persistentvolumeclaims, labels: ["*"]}}]`, errs: []string{
			`rules.yaml:4: rules[0].copy[0].fromRef: must give either field: PATH, the field of the object that names the object read, or name: NAME, its name in the object's namespace`}},
		{name: "ConfigMaps named by a field, unbounded", resources: "[pods]", in: `[{fromRef: {resource: configmaps, field: spec.x, labels: ["*"]}}]`, errs: []string{
			`rules.yaml:4: rules[0].copy[0].fromRef: must give names: [NAME, …], the names of the configmaps the field may name: only configmaps of those names are cached, never every one`}},
		{name: "a Secret", resources: "[pods]", in: `[{fromRef: {resource: secrets, name: s, labels: ["*"]}}]`, errs: []string{
			`rules.yaml:4: rules[0].copy[0].fromRef.resource: …`}},
		{name: "CEL that yields no map", resources: "[pods]", in: `[{cel: {labels: "'x'"}}]`, errs: []string{
			`rules.yaml:4: rules[0].copy[0].cel.labels: invalid CEL key set "'x'": must yield a map(string, string), but yields a string`}},
		{name: "an unknown source", resources: "[pods]", in: `[{fromCluster: {labels: ["*"]}}]`, errs: []string{
			`rules.yaml:4: rules[0].copy[0].fromCluster: unknown field; known fields are fromNamespace, fromNode, fromOwner, fromRef, cel`}},
		{name: "two sources in one item", resources: "[pods]", in: `[{fromNamespace: {labels: [a]}, fromNode: {labels: [b]}}]`, errs: []string{
			`rules.yaml:4: rules[0].copy[0]: must be a mapping with one of fromNamespace, fromNode, fromOwner, fromRef, cel, got a mapping`}},
		{name: "no kind", resources: "[pods]", in: `[{fromNamespace: {except: [a]}}]`, errs: []string{
			`rules.yaml:4: rules[0].copy[0].fromNamespace: must name the keys of the namespace to copy: {labels: [GLOB, …]} or {annotations: [GLOB, …]}`}},
		{name: "both kinds", resources: "[pods]", in: `[{fromNamespace: {labels: [a], annotations: [b]}}]`, errs: []string{
			`rules.yaml:4: rules[0].copy[0].fromNamespace: gives both labels and annotations; copy one kind per item, in two items`}},
		{name: "a bad glob", resources: "[pods]", in: `[{fromNamespace: {labels: ["team-["]}}]`, errs: []string{
			`rules.yaml:4: rules[0].copy[0].fromNamespace.labels[0]: invalid glob "team-[": want a key, or a glob of keys such as example.com/* or team-?`}},
		{name: "an empty list", resources: "[pods]", in: `[]`, errs: []string{
			`rules.yaml:4: rules[0].copy: must not be empty; leave the field out to copy nothing`}},
		{name: "the Node of a Deployment", resources: "[pods, deployments]", in: `[{fromNode: {labels: ["*"]}}]`, errs: []string{
			`rules.yaml:4: rules[0].copy[0].fromNode: reads the Pod's Node, but the rule also names "deployments" (resources[1]): only pods have one; give this key in a rule of its own for pods`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := rules.Parse("rules.yaml", []byte("rules:\n- name: r\n  resources: "+tc.resources+"\n  copy: "+tc.in+"\n"))
			if tc.errs != nil {
				checkLines(t, err, tc.errs)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Name, tc.want.Resources = "r", f.Rules[0].Resources
			if got := f.Rules[0]; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

const copyRules = `rules:
- name: team
  resources: [pods]
  labels:
    env: fixed
  removeLabels: [legacy]
  copy:
  - fromNamespace: {labels: ["*"], except: [kubernetes.io/metadata.name, "internal-*"]}
  - fromNode: {labels: [topology.kubernetes.io/*]}
  - fromNamespace: {annotations: [example.com/*]}
`

// TestEvaluateCopy checks the keys a rule's key sets copy: every key that
// matches and is not excepted, but those the rule sets or removes
// otherwise; where each was read; and what is said when an object is
// missing.
func TestEvaluateCopy(t *testing.T) {
	ns := &metav1.ObjectMeta{Name: "shop", Labels: map[string]string{
		"kubernetes.io/metadata.name": "shop", "team": "payments", "internal-id": "7", "env": "prod", "legacy": "yes"},
		Annotations: map[string]string{"example.com/cost": "cc-1", "other": "x"}}
	node := &metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"topology.kubernetes.io/zone": "eu-1a", "team": "node-team"}}
	look := lookup{source.Namespace: {"shop": ns}, source.Node: {"n1": node}}
	set := rulestest.Compile(t, copyRules, rulestest.Pods)
	tg := set.Targets[rulestest.Pods.GVR]
	p := pod("n1")
	p.SetNamespace("shop")
	for _, tc := range []struct {
		name        string
		look        source.Lookup
		wantLabels  map[string]string
		wantAnns    map[string]string
		wantProblem string
	}{
		{"both found", look, map[string]string{"env": "fixed", "team": "payments", "topology.kubernetes.io/zone": "eu-1a"},
			map[string]string{"example.com/cost": "cc-1"}, ""},
		{"the Node is not known", lookup{source.Namespace: {"shop": ns}}, map[string]string{"env": "fixed", "team": "payments"},
			map[string]string{"example.com/cost": "cc-1"}, `team: copy fromNode labels "topology.kubernetes.io/*": Node "n1" is not known`},
		{"the namespace is not known", lookup{source.Node: {"n1": node}}, map[string]string{"env": "fixed", "topology.kubernetes.io/zone": "eu-1a"},
			nil, `team: copy fromNamespace labels "*" except "kubernetes.io/metadata.name", "internal-*": namespace "shop" is not known`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tg.Evaluate(p, tc.look)
			if !reflect.DeepEqual(ev.Desired.Labels, tc.wantLabels) || !reflect.DeepEqual(ev.Desired.Annotations, tc.wantAnns) {
				t.Errorf("Evaluate() = labels %v, annotations %v; want %v, %v", ev.Desired.Labels, ev.Desired.Annotations, tc.wantLabels, tc.wantAnns)
			}
			joined := strings.Join(ev.Problems, "\n")
			if (tc.wantProblem == "") != (len(ev.Problems) == 0) || !strings.Contains(joined, tc.wantProblem) {
				t.Errorf("Problems = %q, want one containing %q", ev.Problems, tc.wantProblem)
			}
			if len(ev.Conflicts) > 0 {
				t.Errorf("Conflicts = %+v, want none: the rule's own keys win over its copies, the first copy over later ones", ev.Conflicts)
			}
		})
	}
	ev := tg.Evaluate(p, look)
	if want := map[string]bool{"team": true, "topology.kubernetes.io/zone": true}; !reflect.DeepEqual(ev.Desired.IfAbsentLabels, want) {
		t.Errorf("IfAbsentLabels = %v, want %v: a copy never changes a key another field manager set", ev.Desired.IfAbsentLabels, want)
	}
	v := tg.Explain(p, look)
	for _, w := range v[0].Wants {
		if w.Key == "team" && w.Input != `label "team" of namespace "shop"` {
			t.Errorf("Explain() wants team read from %q, want the namespace's label", w.Input)
		}
	}
}

// TestCopyChangeMatters checks which changes of a namespace or a Node
// change what a rule copies.
func TestCopyChangeMatters(t *testing.T) {
	tg := rulestest.Compile(t, copyRules, rulestest.Pods).Targets[rulestest.Pods.GVR]
	obj := func(labels, anns map[string]string) metav1.Object {
		return &metav1.ObjectMeta{Name: "x", Labels: labels, Annotations: anns}
	}
	for _, tc := range []struct {
		name     string
		src      *source.Source
		old, new metav1.Object
		want     bool
	}{
		{"a namespace label added", source.Namespace, obj(nil, nil), obj(map[string]string{"cost": "1"}, nil), true},
		{"a namespace label removed", source.Namespace, obj(map[string]string{"cost": "1"}, nil), obj(nil, nil), true},
		{"an excepted namespace label", source.Namespace, obj(nil, nil), obj(map[string]string{"internal-x": "1"}, nil), false},
		{"a namespace annotation of the prefix", source.Namespace, obj(nil, nil), obj(nil, map[string]string{"example.com/a": "1"}), true},
		{"another namespace annotation", source.Namespace, obj(nil, nil), obj(nil, map[string]string{"other.io/a": "1"}), false},
		{"a Node label of the prefix", source.Node, obj(nil, map[string]string{"a": "1"}), obj(map[string]string{"topology.kubernetes.io/region": "eu"}, nil), true},
		{"another Node label", source.Node, obj(nil, nil), obj(map[string]string{"team": "x"}, nil), false},
	} {
		if got := tg.SourceChangeMatters(tc.src, tc.old, tc.new); got != tc.want {
			t.Errorf("%s: SourceChangeMatters() = %v, want %v", tc.name, got, tc.want)
		}
	}
	if !tg.ReadsNamespaces {
		t.Errorf("ReadsNamespaces is false for a rule that copies from the namespace")
	}
}

// lookup finds the objects it holds, by source and name.
type lookup map[*source.Source]map[string]metav1.Object

func (l lookup) Find(src *source.Source, _, name string) (metav1.Object, bool) {
	o, ok := l[src][name]
	return o, ok
}

const celCopyRules = `rules:
- name: per-container
  resources: [pods]
  annotations:
    example.com/app: fixed
  copy:
  - cel: {annotations: "object.spec.containers.transformMapEntry(i, c, {'example.com/' + c.name: c.image})"}
`

// TestEvaluateCELCopy checks a key set computed in CEL: one annotation
// per container, gone with the container, a key the rule sets otherwise
// kept, and a key that is no valid key refused with a reason.
func TestEvaluateCELCopy(t *testing.T) {
	tg := rulestest.Compile(t, celCopyRules, rulestest.Pods).Targets[rulestest.Pods.GVR]
	withContainers := func(names ...string) *unstructured.Unstructured {
		p := pod("")
		var cs []any
		for _, n := range names {
			cs = append(cs, map[string]any{"name": n, "image": "img-" + n})
		}
		p.Object["spec"] = map[string]any{"containers": cs}
		return p
	}
	for _, tc := range []struct {
		name        string
		containers  []string
		want        map[string]string
		wantProblem string
	}{
		{"two containers", []string{"web", "sidecar"}, map[string]string{"example.com/app": "fixed", "example.com/web": "img-web", "example.com/sidecar": "img-sidecar"}, ""},
		{"one gone", []string{"web"}, map[string]string{"example.com/app": "fixed", "example.com/web": "img-web"}, ""},
		{"the rule's own key is not copied", []string{"app"}, map[string]string{"example.com/app": "fixed"}, ""},
		{"no valid key", []string{"a b"}, map[string]string{"example.com/app": "fixed"}, `is no valid key`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tg.Evaluate(withContainers(tc.containers...), nil)
			if !reflect.DeepEqual(ev.Desired.Annotations, tc.want) {
				t.Errorf("Evaluate() = annotations %v, want %v", ev.Desired.Annotations, tc.want)
			}
			joined := strings.Join(ev.Problems, "\n")
			if (tc.wantProblem == "") != (len(ev.Problems) == 0) || !strings.Contains(joined, tc.wantProblem) {
				t.Errorf("Problems = %q, want one containing %q", ev.Problems, tc.wantProblem)
			}
		})
	}
	if p := tg.Projection(); !p.Whole || !slices.Contains(p.AnnotationGlobs, "*") {
		t.Errorf("Projection() = %+v, want whole objects (the containers read), keeping every annotation another manager may have set", p)
	}
}

// TestEvaluateRecordedCopy checks that a recorded key set (once: true)
// records the keys it copies and those the object carries that it would
// copy, its source gone or not, but not the keys the rule sets otherwise.
func TestEvaluateRecordedCopy(t *testing.T) {
	set := rulestest.Compile(t, `rules:
- name: record
  resources: [pods]
  labels: {team-lead: fixed}
  copy:
  - fromNamespace: {labels: ["team*"], once: true}
  - fromNamespace: {labels: ["env"]}
`, rulestest.Pods)
	tg := set.Targets[rulestest.Pods.GVR]
	ns := &metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"team": "payments", "team-lead": "x", "env": "prod"}}
	p := pod("")
	p.SetNamespace("shop")
	p.SetLabels(map[string]string{"team-old": "kept", "app": "web"})
	ev := tg.Evaluate(p, lookup{source.Namespace: {"shop": ns}})
	if got, want := ev.Recorded("label"), []string{"team", "team-old"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Recorded(label) = %v, want %v: the keys copied and those carried that the set copies, not team-lead (set) nor env (followed)", got, want)
	}
	v := tg.Explain(p, lookup{source.Namespace: {"shop": ns}})
	for _, w := range v[0].Wants {
		if (w.Key == "team") != w.Once {
			t.Errorf("Explain() wants %s recorded: %v", w.Key, w.Once)
		}
	}
}
