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
	"github.com/kube-annotator/kube-annotator/pkg/rules/verdict"
)

// TestParseFromNode checks the {fromNode: {…}} form: what it decodes to,
// and the errors that name the field.
func TestParseFromNode(t *testing.T) {
	zone := rulefile.RelatedKey{Source: source.Node, Kind: "label", Key: "topology.kubernetes.io/zone"}
	tests := []struct {
		name      string
		resources string
		in        string // the labels mapping of the rule
		want      rulefile.Rule
		errs      []string
	}{
		{name: "label, with default and ifAbsent", resources: "[pods]",
			in:   "{zone: {fromNode: {label: topology.kubernetes.io/zone}, default: unknown, ifAbsent: true}}",
			want: rulefile.Rule{Labels: rulefile.Metadata{FromRelated: map[string]rulefile.RelatedKey{"zone": zone}, Default: map[string]string{"zone": "unknown"}, IfAbsent: map[string]bool{"zone": true}}}},
		{name: "pods by its short name", resources: "[po]",
			in:   "{zone: {fromNode: {label: topology.kubernetes.io/zone}}}",
			want: rulefile.Rule{Labels: rulefile.Metadata{FromRelated: map[string]rulefile.RelatedKey{"zone": zone}}}},
		{name: "another resource is refused, naming the field", resources: "[pods, deployments]",
			in: "{zone: {fromNode: {label: topology.kubernetes.io/zone}}}", errs: []string{
				`rules.yaml:4: rules[0].labels.zone.fromNode: reads the Pod's Node, but the rule also names "deployments" (resources[1]): only pods have one; give this key in a rule of its own for pods`}},
		{name: "both label and annotation", resources: "[pods]", in: "{zone: {fromNode: {label: a, annotation: b}}}", errs: []string{
			`rules.yaml:4: rules[0].labels.zone.fromNode: gives both label and annotation; read one key of the Pod's Node`}},
		{name: "no key", resources: "[pods]", in: "{zone: {fromNode: {}}}", errs: []string{
			`rules.yaml:4: rules[0].labels.zone.fromNode: must name the Pod's Node's key to read: {label: KEY} or {annotation: KEY}`}},
		{name: "an invalid key", resources: "[pods]", in: "{zone: {fromNode: {label: 'a b'}}}", errs: []string{
			`rules.yaml:4: rules[0].labels.zone.fromNode.label: invalid label key: …`}},
		{name: "two forms", resources: "[pods]", in: "{zone: {fromNode: {label: a}, jsonPath: '{.spec.nodeName}'}}", errs: []string{
			`rules.yaml:4: rules[0].labels.zone: gives both fromNode and jsonPath; a value is read one way`}},
		{name: "set and removed", resources: "[pods]", in: "{zone: {fromNode: {label: a}}}\n  removeLabels: [zone]", errs: []string{
			`rules.yaml:2: rules[0].removeLabels: "zone" is both set and removed by the rule`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := rules.Parse("rules.yaml", []byte("rules:\n- name: r\n  resources: "+tc.resources+"\n  labels: "+tc.in+"\n"))
			if tc.errs != nil {
				checkLines(t, err, tc.errs)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := f.Rules[0]
			tc.want.Name, tc.want.Resources = "r", f.Rules[0].Resources
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

const fromNodeRules = `rules:
- name: zone
  resources: [pods]
  labels:
    zone: {fromNode: {label: topology.kubernetes.io/zone}, default: unknown}
  annotations:
    rack: {fromNode: {annotation: example.com/rack}}
`

// pod returns a Pod as the cache keeps it for fromNode: its metadata and
// spec.nodeName ("" for a Pod not scheduled).
func pod(node string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"namespace": "default", "name": "p"}}}
	if node != "" {
		u.Object["spec"] = map[string]any{"nodeName": node}
	}
	return u
}

// TestEvaluateFromNode checks the values read from a Pod's Node, the
// default where they are missing, and that explain says where each was
// read.
func TestEvaluateFromNode(t *testing.T) {
	nodes := map[string]*metav1.ObjectMeta{
		"n1":   {Name: "n1", Labels: map[string]string{"topology.kubernetes.io/zone": "eu-1a"}, Annotations: map[string]string{"example.com/rack": "r7"}},
		"bare": {Name: "bare"},
		"bad":  {Name: "bad", Labels: map[string]string{"topology.kubernetes.io/zone": "not a label value"}},
	}
	find := nodesLookup(func(ns, name string) (metav1.Object, bool) {
		n, ok := nodes[name]
		return n, ok && ns == ""
	})
	for _, tc := range []struct {
		name       string
		node       string
		find       source.Lookup
		wantLabels map[string]string
		wantAnns   map[string]string
		// wantInput is where zone is read from; wantWhy, when it is
		// not, why the default is set.
		wantInput, wantWhy string
		wantProblem        string
	}{
		{"scheduled", "n1", find, map[string]string{"zone": "eu-1a"}, map[string]string{"rack": "r7"}, `label "topology.kubernetes.io/zone" of Node "n1"`, "", ""},
		{"not scheduled", "", find, map[string]string{"zone": "unknown"}, nil, "", "not scheduled yet", "not scheduled yet"},
		{"the Node is not known", "gone", find, map[string]string{"zone": "unknown"}, nil, "", `Node "gone" is not known`, `Node "gone" is not known`},
		{"the Node lacks the key", "bare", find, map[string]string{"zone": "unknown"}, nil, "",
			`Node "bare" has no label "topology.kubernetes.io/zone"`, `Node "bare" has no annotation "example.com/rack"`},
		{"an invalid label value", "bad", find, map[string]string{"zone": "unknown"}, nil, "",
			`the value of label "topology.kubernetes.io/zone" of Node "bad" (17 bytes) is not valid`, `Node "bad" has no annotation`},
		{"no way to read Nodes", "n1", nil, map[string]string{"zone": "unknown"}, nil, "", `Node "n1" cannot be read here`, `Node "n1" cannot be read here`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := rulestest.Compile(t, fromNodeRules, rulestest.Pods)
			tg := set.Targets[rulestest.Pods.GVR]
			ev := tg.Evaluate(pod(tc.node), tc.find)
			if !reflect.DeepEqual(ev.Desired.Labels, tc.wantLabels) || !reflect.DeepEqual(ev.Desired.Annotations, tc.wantAnns) {
				t.Errorf("Evaluate() = labels %v, annotations %v; want %v, %v", ev.Desired.Labels, ev.Desired.Annotations, tc.wantLabels, tc.wantAnns)
			}
			joined := strings.Join(ev.Problems, "\n")
			if (tc.wantProblem == "") != (len(ev.Problems) == 0) || !strings.Contains(joined, tc.wantProblem) {
				t.Errorf("Problems = %q, want one containing %q", ev.Problems, tc.wantProblem)
			}
			v := tg.Explain(pod(tc.node), tc.find)
			i := slices.IndexFunc(v[0].Wants, func(w verdict.Want) bool { return w.Key == "zone" })
			if i < 0 || v[0].Wants[i].Input != tc.wantInput || (tc.wantWhy == "") != (v[0].Wants[i].Defaulted == "") ||
				!strings.Contains(v[0].Wants[i].Defaulted, tc.wantWhy) {
				t.Errorf("Explain() wants %+v; want zone read from %q, or defaulted as %q", v[0].Wants, tc.wantInput, tc.wantWhy)
			}
		})
	}
}

// TestFromNodeNeeds checks what a rule reading a Pod's Node needs: the
// Pod's spec.nodeName in the cache, the Nodes' keys it reads, and which
// changes of a Node matter.
func TestFromNodeNeeds(t *testing.T) {
	set := rulestest.Compile(t, fromNodeRules, rulestest.Pods)
	tg := set.Targets[rulestest.Pods.GVR]
	p := tg.Projection()
	if !p.Whole || !slices.ContainsFunc(p.Fields, func(f []string) bool { return slices.Equal(f, []string{"spec", "nodeName"}) }) {
		t.Errorf("Projection() = %+v, want whole objects keeping spec.nodeName", p)
	}
	if len(p.Fields) != 4 {
		t.Errorf("Projection().Fields = %q, want apiVersion, kind, metadata and spec.nodeName only", p.Fields)
	}
	if !p.Labels.Has("zone") || !p.Annotations.Has("rack") {
		t.Errorf("Projection() keeps labels %v, annotations %v; want zone and rack, which the rule sets", p.Labels, p.Annotations)
	}
	if got := set.RelatedSources(); !slices.Equal(got, []*source.Source{source.Node}) {
		t.Errorf("RelatedSources() = %v, want source.Node", got)
	}
	want := []rulefile.RelatedKey{{Source: source.Node, Kind: "annotation", Key: "example.com/rack"}, {Source: source.Node, Kind: "label", Key: "topology.kubernetes.io/zone"}}
	if got := tg.RelatedKeys(source.Node); !reflect.DeepEqual(got, want) {
		t.Errorf("RelatedKeys() = %v, want %v", got, want)
	}
	node := func(labels, anns map[string]string) metav1.Object {
		return &metav1.ObjectMeta{Name: "n1", Labels: labels, Annotations: anns}
	}
	for _, tc := range []struct {
		name     string
		old, new metav1.Object
		want     bool
	}{
		{"the label read", node(map[string]string{"topology.kubernetes.io/zone": "a"}, nil), node(map[string]string{"topology.kubernetes.io/zone": "b"}, nil), true},
		{"the annotation read, added", node(nil, nil), node(nil, map[string]string{"example.com/rack": "r1"}), true},
		{"another label", node(map[string]string{"x": "a"}, nil), node(map[string]string{"x": "b"}, nil), false},
		{"the label read, as an annotation", node(nil, nil), node(nil, map[string]string{"topology.kubernetes.io/zone": "b"}), false},
	} {
		if got := tg.SourceChangeMatters(source.Node, tc.old, tc.new); got != tc.want {
			t.Errorf("%s: SourceChangeMatters() = %v, want %v", tc.name, got, tc.want)
		}
	}
	other := rulestest.Compile(t, "rules:\n- name: r\n  resources: [configmaps]\n  labels: {a: b}\n", rulestest.ConfigMaps)
	if got := other.RelatedSources(); len(got) != 0 {
		t.Errorf("RelatedSources() of rules without fromNode = %v, want none", got)
	}
}

// TestFromNodeConflicts checks that a value read from the Node meets the
// checks of other values: a rule on every Pod that sets the same key
// otherwise, and a selector on the key.
func TestFromNodeConflicts(t *testing.T) {
	for _, tc := range []struct{ name, rules, want string }{
		{"two rules on every Pod", fromNodeRules + "- name: fixed\n  resources: [pods]\n  labels: {zone: here}\n",
			`conflicts with rules[0] (zone)`},
		{"a selector on the key the rule sets", "rules:\n- name: r\n  resources: [pods]\n  selector: zone=a\n  labels: {zone: {fromNode: {label: z}}}\n",
			`which the rule sets to a value read from the Pod's Node's label "z"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := rules.Parse("rules.yaml", []byte(tc.rules))
			if err == nil {
				_, _, err = rules.Compile("rules.yaml", f, func(string) (source.Resource, error) { return rulestest.Pods, nil })
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestLockedReadsFromNode checks that the rules an opted-out Pod still
// gets (allowOptOut: false) read its Node as they do on any other Pod.
func TestLockedReadsFromNode(t *testing.T) {
	set := rulestest.Compile(t, strings.Replace(fromNodeRules, "resources: [pods]", "resources: [pods]\n  allowOptOut: false", 1), rulestest.Pods)
	find := nodesLookup(func(ns, name string) (metav1.Object, bool) {
		return &metav1.ObjectMeta{Name: name, Labels: map[string]string{"topology.kubernetes.io/zone": "eu-1a"}}, ns == "" && name == "n1"
	})
	locked := set.Targets[rulestest.Pods.GVR].Locked()
	if locked == nil {
		t.Fatal("Locked() = nil; the rule does not allow opting out")
	}
	if got := locked.Evaluate(pod("n1"), find).Desired.Labels; !reflect.DeepEqual(got, map[string]string{"zone": "eu-1a"}) {
		t.Errorf("Locked().Evaluate() labels = %v, want zone: eu-1a, read from the Node", got)
	}
}

// nodesLookup is the Lookup that finds Nodes, and only Nodes, with find.
type nodesLookup func(ns, name string) (metav1.Object, bool)

func (find nodesLookup) Find(src *source.Source, ns, name string) (metav1.Object, bool) {
	if src != source.Node {
		return nil, false
	}
	return find(ns, name)
}
