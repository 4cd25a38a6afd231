package admission

import (
	"maps"
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// The markers of the default field manager.
const (
	marker    = "configmaps.admission.kube-annotator.io/kube-annotator"
	nsMarker  = "namespaces.admission.kube-annotator.io/kube-annotator"
	depMarker = "deployments.apps.admission.kube-annotator.io/kube-annotator"
)

var (
	configMaps  = rulestest.ConfigMaps.GVR
	namespaces  = rulestest.Namespaces.GVR
	deployments = rulestest.Deployments.GVR
	// served are the resources the tests' cluster serves.
	served = []source.Resource{rulestest.ConfigMaps, rulestest.Namespaces, rulestest.Deployments, rulestest.Pods}
)

func options() Options {
	return Options{FieldManager: reconcile.FieldManager, ExcludeNamespaces: rules.DefaultExcludedNamespaces}
}

func cm(ns, name string, anns, lbls, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: anns, Labels: lbls}, Data: data}
}

func namespace(name string, lbls map[string]string) *corev1.Namespace {
	return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
}

func deployment(ns, name string, replicas int32, image string) *appsv1.Deployment {
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	d.Spec.Replicas = &replicas
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: image}}
	return d
}

// request is one admission request of a test case and what it must give.
type request struct {
	name     string
	gvr      schema.GroupVersionResource
	obj, old runtime.Object
	ns       map[string]string // labels of the object's namespace
	// want are the annotations and labels after admission.
	wantAnns, wantLabels map[string]string
	// ignored is set when a policy fails and the API server ignores it.
	ignored bool
	// unwatched is set when the controller does not see the object (it
	// watches another namespace).
	unwatched bool
	// controller are the annotations the controller still changes: what
	// the notes leave to it.
	controller []string
	// nsIgnored is set when the object's namespace opts out.
	nsIgnored bool
}

func TestTranslate(t *testing.T) {
	web := map[string]string{"app": "web"}
	tests := []struct {
		name     string
		rules    string
		opts     func(*Options)
		policies []string
		notes    []string
		requests []request
	}{
		{name: "literal values",
			rules:    "rules:\n- {name: team, resources: [configmaps, deployments], annotations: {team: a, example.com/x: 'y'}, labels: {tier: web}}\n",
			policies: []string{"team"},
			requests: []request{
				{name: "created bare", gvr: configMaps, obj: cm("ns", "x", nil, nil, nil),
					wantAnns:   map[string]string{"team": "a", "example.com/x": "y", marker: "example.com/x,label:tier,team"},
					wantLabels: map[string]string{"tier": "web"}},
				{name: "a value the creator set is not listed", gvr: configMaps, obj: cm("ns", "x", map[string]string{"team": "a", "user": "u"}, nil, nil),
					wantAnns:   map[string]string{"team": "a", "user": "u", "example.com/x": "y", marker: "example.com/x,label:tier"},
					wantLabels: map[string]string{"tier": "web"}},
				{name: "a different value is replaced, and listed", gvr: configMaps, obj: cm("ns", "x", map[string]string{"team": "b"}, nil, nil),
					wantAnns:   map[string]string{"team": "a", "example.com/x": "y", marker: "example.com/x,label:tier,team"},
					wantLabels: map[string]string{"tier": "web"}},
				{name: "an existing marker is kept, merged", gvr: configMaps, obj: cm("ns", "x", map[string]string{"team": "a", "example.com/x": "y", marker: "old,team"}, nil, nil),
					wantAnns:   map[string]string{"team": "a", "example.com/x": "y", marker: "label:tier,old,team"},
					wantLabels: map[string]string{"tier": "web"}},
				{name: "a marker of format 1 named is merged", gvr: configMaps, obj: cm("ns", "x", map[string]string{marker: "format:1,old"}, nil, nil),
					wantAnns:   map[string]string{"team": "a", "example.com/x": "y", marker: "example.com/x,format:1,label:tier,old,team"},
					wantLabels: map[string]string{"tier": "web"}},
				{name: "a marker of a newer format is left as it is", gvr: configMaps, obj: cm("ns", "x", map[string]string{marker: "old,format:2"}, nil, nil),
					wantAnns:   map[string]string{"team": "a", "example.com/x": "y", marker: "old,format:2"},
					wantLabels: map[string]string{"tier": "web"}},
				{name: "a deployment", gvr: deployments, obj: deployment("ns", "d", 1, "nginx"),
					wantAnns:   map[string]string{"team": "a", "example.com/x": "y", depMarker: "example.com/x,label:tier,team"},
					wantLabels: map[string]string{"tier": "web"}},
				{name: "excluded namespace", gvr: configMaps, obj: cm("kube-system", "x", nil, nil, nil)},
			}},
		{name: "set if absent",
			rules: "rules:\n- {name: psa, resources: [configmaps, namespaces], annotations: {team: a, inject: {value: enabled, ifAbsent: true}}, " +
				"labels: {psa: {value: baseline, ifAbsent: true}, x: {jsonPath: '{.data.x}', ifAbsent: true}}}\n",
			policies: []string{"psa"},
			requests: []request{
				{name: "created without the keys: added", gvr: namespaces, obj: namespace("n", nil),
					wantAnns:   map[string]string{"team": "a", "inject": "enabled", nsMarker: "inject,label:psa,team"},
					wantLabels: map[string]string{"psa": "baseline"}},
				{name: "created with the keys: kept", gvr: namespaces, obj: namespace("n", map[string]string{"psa": "privileged"}),
					wantAnns:   map[string]string{"team": "a", "inject": "enabled", nsMarker: "inject,team"},
					wantLabels: map[string]string{"psa": "privileged"}},
				{name: "created with the keys, other values: kept", gvr: configMaps,
					obj:        cm("ns", "x", map[string]string{"inject": "disabled"}, map[string]string{"psa": "privileged", "x": "mine"}, map[string]string{"x": "1"}),
					wantAnns:   map[string]string{"team": "a", "inject": "disabled", marker: "team"},
					wantLabels: map[string]string{"psa": "privileged", "x": "mine"}},
				{name: "a value read, where absent", gvr: configMaps, obj: cm("ns", "x", nil, nil, map[string]string{"x": "1"}),
					wantAnns:   map[string]string{"team": "a", "inject": "enabled", marker: "inject,label:psa,label:x,team"},
					wantLabels: map[string]string{"psa": "baseline", "x": "1"}},
				{name: "updated to drop the key: added again", gvr: configMaps,
					old:        cm("ns", "x", map[string]string{"team": "a", "inject": "enabled"}, map[string]string{"psa": "privileged"}, nil),
					obj:        cm("ns", "x", map[string]string{"team": "a", "inject": "enabled"}, nil, nil),
					wantAnns:   map[string]string{"team": "a", "inject": "enabled", marker: "label:psa"},
					wantLabels: map[string]string{"psa": "baseline"}},
			}},
		{name: "opt-outs and audit mode",
			rules: "rules:\n- {name: r, resources: [configmaps, namespaces], annotations: {a: '1'}}\n" +
				"- {name: audit, resources: [configmaps], selector: app, mode: audit, annotations: {a: '2', b: '2'}}\n",
			policies: []string{"r"},
			notes:    []string{"rule audit: mode: audit mode writes nothing, at admission neither; the controller reports what the rule would change"},
			requests: []request{
				{name: "applied", gvr: configMaps, obj: cm("ns", "x", nil, nil, nil), wantAnns: map[string]string{"a": "1", marker: "a"}},
				{name: "an audit rule takes no key", gvr: configMaps, obj: cm("ns", "x", nil, map[string]string{"app": "x"}, nil),
					wantAnns: map[string]string{"a": "1", marker: "a"}, wantLabels: map[string]string{"app": "x"}},
				{name: "the object opts out", gvr: configMaps, obj: cm("ns", "x", map[string]string{rulefile.IgnoreAnnotation: "true"}, nil, nil)},
				{name: "its namespace opts out", gvr: configMaps, obj: cm("ns", "x", nil, nil, nil), nsIgnored: true},
				{name: "a Namespace that opts out", gvr: namespaces, obj: &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
					ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{rulefile.IgnoreAnnotation: "true"}}}},
			}},
		{name: "namespace globs",
			rules:    "rules:\n- {name: r, resources: [configmaps, namespaces], namespaces: ['team-*'], excludeNamespaces: ['team-b*'], annotations: {a: '1'}}\n",
			opts:     func(o *Options) { o.ExcludeNamespaces = []string{"kube-*"} },
			policies: []string{"r"},
			requests: []request{
				{name: "in", gvr: configMaps, obj: cm("team-a", "x", nil, nil, nil), wantAnns: map[string]string{"a": "1", marker: "a"}},
				{name: "excluded by the rule", gvr: configMaps, obj: cm("team-b1", "x", nil, nil, nil)},
				{name: "not in", gvr: configMaps, obj: cm("other", "x", nil, nil, nil)},
				{name: "a Namespace by its own name", gvr: namespaces, obj: namespace("team-c", nil), wantAnns: map[string]string{"a": "1", nsMarker: "a"}},
				{name: "a Namespace not selected", gvr: namespaces, obj: namespace("other", nil)},
				{name: "a Namespace excluded", gvr: namespaces, obj: namespace("kube-team-a", nil)},
			}},
		{name: "restricted to one namespace",
			rules:    "rules:\n- {name: r, resources: [configmaps, namespaces], annotations: {a: '1'}}\n",
			opts:     func(o *Options) { o.Namespace = "team-a" },
			policies: []string{"r"},
			requests: []request{
				{name: "in", gvr: configMaps, obj: cm("team-a", "x", nil, nil, nil), wantAnns: map[string]string{"a": "1", marker: "a"}},
				{name: "elsewhere", gvr: configMaps, obj: cm("team-b", "x", nil, nil, nil), unwatched: true},
				{name: "Namespaces are cluster-scoped", gvr: namespaces, obj: namespace("team-b", nil), wantAnns: map[string]string{"a": "1", nsMarker: "a"}},
			}},
		{name: "namespace selectors",
			rules: "rules:\n- {name: prod, resources: [configmaps, namespaces], namespaceSelector: 'env in (prod)', annotations: {p: '1'}}\n" +
				"- {name: big, resources: [configmaps], namespaceSelector: 'size>2', annotations: {b: '1'}}\n",
			policies: []string{"prod", "big"},
			requests: []request{
				{name: "selected", gvr: configMaps, obj: cm("ns", "x", nil, nil, nil), ns: map[string]string{"env": "prod", "size": "3"},
					wantAnns: map[string]string{"p": "1", "b": "1", marker: "b,p"}},
				{name: "not selected", gvr: configMaps, obj: cm("ns", "x", nil, nil, nil), ns: map[string]string{"env": "dev", "size": "2"}},
				{name: "a Namespace by its own labels", gvr: namespaces, obj: namespace("ns", map[string]string{"env": "prod"}),
					wantAnns: map[string]string{"p": "1", nsMarker: "p"}, wantLabels: map[string]string{"env": "prod"}},
			}},
		{name: "object selectors and names",
			rules: "rules:\n- {name: sel, resources: [configmaps], selector: 'app=web', annotations: {s: '1'}}\n" +
				"- {name: names, resources: [configmaps], names: ['web-*'], annotations: {n: '1'}}\n",
			policies: []string{"sel", "names"},
			notes:    []string{"rule names: names: objects created with generateName (a ReplicaSet's Pods, say) have no name at admission; the controller annotates them after creation"},
			requests: []request{
				{name: "both", gvr: configMaps, obj: cm("ns", "web-1", nil, web, nil),
					wantAnns: map[string]string{"s": "1", "n": "1", marker: "n,s"}, wantLabels: web},
				{name: "neither", gvr: configMaps, obj: cm("ns", "api", nil, nil, nil)},
				{name: "generateName: no name yet", gvr: configMaps, obj: cm("ns", "", nil, nil, nil)},
				{name: "update that drops the label", gvr: configMaps, obj: cm("ns", "api", nil, nil, nil), old: cm("ns", "api", nil, web, nil)},
				{name: "update that adds it", gvr: configMaps, obj: cm("ns", "api", nil, web, nil), old: cm("ns", "api", nil, nil, nil),
					wantAnns: map[string]string{"s": "1", marker: "s"}, wantLabels: web},
			}},
		{name: "values read with JSONPath",
			rules: "rules:\n- name: read\n  resources: [configmaps, deployments]\n  annotations: {k: {jsonPath: '{.data.k}'}, v: {jsonPath: 'v{.data.k}-{.data.n}'}, img: {jsonPath: '{.spec.template.spec.containers[0].image}'}, replicas: {jsonPath: '{.spec.replicas}'}}\n" +
				"  labels: {k: {jsonPath: '{.data.k}'}}\n",
			policies: []string{"read"},
			requests: []request{
				{name: "fields present", gvr: configMaps, obj: cm("ns", "x", nil, nil, map[string]string{"k": "one", "n": "2"}),
					wantAnns:   map[string]string{"k": "one", "v": "vone-2", marker: "k,label:k,v"},
					wantLabels: map[string]string{"k": "one"}},
				{name: "a missing field leaves the key unset", gvr: configMaps, obj: cm("ns", "x", nil, nil, map[string]string{"k": "one"}),
					wantAnns: map[string]string{"k": "one", marker: "k,label:k"}, wantLabels: map[string]string{"k": "one"}},
				{name: "not a label value: the label is left unset", gvr: configMaps, obj: cm("ns", "x", nil, nil, map[string]string{"k": "a b"}),
					wantAnns: map[string]string{"k": "a b", marker: "k"}},
				{name: "a number and a list item", gvr: deployments, obj: deployment("ns", "d", 3, "nginx:1"),
					wantAnns: map[string]string{"img": "nginx:1", "replicas": "3", depMarker: "img,replicas"}},
			}},
		{name: "fields CEL must escape",
			rules: "rules:\n- name: read\n  resources: [configmaps]\n" +
				`  annotations: {ns: {jsonPath: '{.metadata.namespace}'}, app: {jsonPath: '{.metadata.labels.app\.kubernetes\.io/name}'}, d: {jsonPath: '{.data.in}'}}` + "\n",
			policies: []string{"read"},
			requests: []request{
				{name: "read", gvr: configMaps, obj: cm("ns", "x", nil, map[string]string{"app.kubernetes.io/name": "web"}, map[string]string{"in": "i"}),
					wantAnns: map[string]string{"ns": "ns", "app": "web", "d": "i", marker: "app,d,ns"}, wantLabels: map[string]string{"app.kubernetes.io/name": "web"}},
			}},
		{name: "a value of the wrong type: the policy fails and is ignored",
			rules:    "rules:\n- {name: r, resources: [configmaps], annotations: {a: '1', d: {jsonPath: '{.data}'}}}\n",
			policies: []string{"r"},
			requests: []request{
				{name: "a map", gvr: configMaps, obj: cm("ns", "x", nil, nil, map[string]string{"k": "v"}), ignored: true},
			}},
		{name: "rules that conflict: file order decides",
			rules: "rules:\n- {name: web, resources: [configmaps], selector: app=web, annotations: {team: a}}\n" +
				"- {name: from, resources: [configmaps], names: ['read-*'], annotations: {team: {jsonPath: '{.data.team}'}}}\n" +
				"- {name: all, resources: [configmaps, deployments], annotations: {team: b, same: s}}\n" +
				"- {name: same, resources: [configmaps], selector: app=web, annotations: {same: s}}\n",
			policies: []string{"web", "from", "all", "same"},
			notes:    []string{"rule from: names: objects created with generateName (a ReplicaSet's Pods, say) have no name at admission; the controller annotates them after creation"},
			requests: []request{
				{name: "the first rule", gvr: configMaps, obj: cm("ns", "read-1", nil, web, map[string]string{"team": "c"}),
					wantAnns: map[string]string{"team": "a", "same": "s", marker: "same,team"}, wantLabels: web},
				{name: "the second rule's value", gvr: configMaps, obj: cm("ns", "read-1", nil, nil, map[string]string{"team": "c"}),
					wantAnns: map[string]string{"team": "c", "same": "s", marker: "same,team"}},
				{name: "no value: the third rule's", gvr: configMaps, obj: cm("ns", "read-1", nil, nil, nil),
					wantAnns: map[string]string{"team": "b", "same": "s", marker: "same,team"}},
				{name: "only the third rule", gvr: deployments, obj: deployment("ns", "read-1", 1, "x"),
					wantAnns: map[string]string{"team": "b", "same": "s", depMarker: "same,team"}},
			}},
		{name: "what is left to the controller",
			rules: "rules:\n- {name: wild, resources: [configmaps], selector: app, annotations: {w: {jsonPath: '{.data[*]}'}}}\n" +
				"- {name: after, resources: [configmaps], annotations: {w: x, y: z}, removeAnnotations: [old], removeLabels: [gone]}\n",
			policies: []string{"after"},
			notes: []string{
				"rule wild: annotations.w: a slice, a wildcard or a negative index cannot be read at admission; only fields and list indexes such as {.spec.containers[0].image} can; the controller sets it",
				"rule wild: nothing is set at admission; the controller enforces the whole rule",
				"rule after: removeAnnotations: " + removalReason,
				"rule after: removeLabels: " + removalReason,
				"rule after: annotations.w: left to the controller: rule wild, earlier in the file, may set it from a value admission cannot read",
			},
			requests: []request{
				{name: "the rest is set", gvr: configMaps, obj: cm("ns", "x", map[string]string{"old": "o"}, nil, nil),
					wantAnns: map[string]string{"old": "o", "y": "z", marker: "y"}, controller: []string{"old", "w"}},
			}},
		{name: "CEL conditions and values",
			rules: "rules:\n- {name: big, resources: [deployments], when: 'object.spec.replicas > 2', labels: {size: big}, " +
				"annotations: {example.com/id: {cel: \"object.metadata.namespace + '/' + object.metadata.name\"}, n: {cel: 'object.spec.replicas'}}}\n" +
				"- {name: prod, resources: [deployments], when: \"namespaceObject.metadata.?labels[?'env'].orValue('') == 'prod'\", annotations: {env: prod}}\n",
			policies: []string{"big", "prod"},
			requests: []request{
				{name: "small: not selected", gvr: deployments, obj: deployment("ns", "d", 1, "nginx")},
				{name: "big: selected, the string value set, the number not", gvr: deployments, obj: deployment("ns", "d", 3, "nginx"),
					wantAnns:   map[string]string{"example.com/id": "ns/d", depMarker: "example.com/id,label:size"},
					wantLabels: map[string]string{"size": "big"}},
				{name: "in a prod namespace", gvr: deployments, obj: deployment("ns", "d", 1, "nginx"), ns: map[string]string{"env": "prod"},
					wantAnns: map[string]string{"env": "prod", depMarker: "env"}},
			}},
		{name: "values from the namespace are the controller's",
			rules: "rules:\n- {name: ns, resources: [configmaps], annotations: {team: {fromNamespace: {label: team}}, a: '1'}, labels: {t: {fromNamespace: {annotation: t}}}}\n" +
				"- {name: later, resources: [configmaps], selector: app, annotations: {team: x}}\n",
			policies: []string{"ns"},
			notes: []string{
				"rule ns: annotations.team: " + errFromNamespace.Error() + "; the controller sets it",
				"rule ns: labels.t: " + errFromNamespace.Error() + "; the controller sets it",
				"rule later: annotations.team: left to the controller: rule ns, earlier in the file, may set it from a value admission cannot read",
				"rule later: nothing is set at admission; the controller enforces the whole rule",
			},
			requests: []request{
				{name: "the literal only", gvr: configMaps, obj: cm("ns", "x", nil, nil, nil),
					wantAnns: map[string]string{"a": "1", marker: "a"}, controller: []string{"team", "t"}},
			}},
		{name: "values from a Pod's Node are the controller's",
			rules:    "rules:\n- {name: zone, resources: [pods], annotations: {zone: {fromNode: {label: topology.kubernetes.io/zone}, default: unknown}, a: '1'}}\n",
			policies: []string{"zone"},
			notes:    []string{"rule zone: annotations.zone: " + errFromRelated.Error() + "; the controller sets it"},
			requests: []request{
				{name: "the literal only, not the default", gvr: pods, obj: pod("ns", "p"),
					wantAnns: map[string]string{"a": "1", podMarker: "a"}, controller: []string{"zone"}},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := options()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			set := rulestest.Compile(t, tc.rules, served...)
			if err := set.ExcludeNamespaces(opts.ExcludeNamespaces); err != nil {
				t.Fatal(err)
			}
			policies, notes, err := Translate(set, opts)
			if err != nil {
				t.Fatalf("Translate() error = %v", err)
			}
			var names, gotNotes []string
			var compiledPolicies []*compiled
			for _, p := range policies {
				names = append(names, p.Rule)
				checkObjects(t, opts, p)
				compiledPolicies = append(compiledPolicies, compilePolicy(t, p.Policy))
			}
			for _, n := range notes {
				gotNotes = append(gotNotes, n.String())
			}
			if !slices.Equal(names, tc.policies) {
				t.Errorf("policies for rules %q, want %q", names, tc.policies)
			}
			if !slices.Equal(gotNotes, tc.notes) {
				t.Errorf("notes:\n%q\nwant\n%q", gotNotes, tc.notes)
			}
			for _, rq := range tc.requests {
				t.Run(rq.name, func(t *testing.T) { checkRequest(t, set, compiledPolicies, rq) })
			}
		})
	}
}

// checkObjects checks the names, labels and binding of p.
func checkObjects(t *testing.T, opts Options, p Policy) {
	t.Helper()
	want := map[string]string{ManagedByLabel: ManagedBy, FieldManagerLabel: opts.FieldManager, RuleLabel: p.Rule}
	name := opts.FieldManager + "." + p.Rule
	if p.Policy.Name != name || p.Binding.Name != name || p.Binding.Spec.PolicyName != name {
		t.Errorf("policy %q, binding %q for policy %q; want all %q", p.Policy.Name, p.Binding.Name, p.Binding.Spec.PolicyName, name)
	}
	if !maps.Equal(p.Policy.Labels, want) || !maps.Equal(p.Binding.Labels, want) {
		t.Errorf("labels %v and %v, want %v", p.Policy.Labels, p.Binding.Labels, want)
	}
	if *p.Policy.Spec.FailurePolicy != admissionregistrationv1.Ignore {
		t.Errorf("failurePolicy %v, want Ignore", *p.Policy.Spec.FailurePolicy)
	}
}

// checkRequest admits rq through the policies, in file order and in
// reverse (the API server's order is not defined), and checks the result:
// the annotations and labels wanted, and nothing left for the controller
// to write unless a policy failed.
func checkRequest(t *testing.T, set *rules.Set, policies []*compiled, rq request) {
	var results []metav1.Object
	reversed := slices.Clone(policies)
	slices.Reverse(reversed)
	for _, order := range [][]*compiled{policies, reversed} {
		obj, ignored := rq.obj, false
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: rq.ns}}
		if rq.nsIgnored {
			ns.Annotations = map[string]string{rulefile.IgnoreAnnotation: "true"}
		}
		if rq.gvr == namespaces {
			ns = nil
		}
		// Twice: a reinvocation changes nothing.
		for range 2 {
			for _, p := range order {
				out, _, err := p.run(t, admit{gvr: rq.gvr, obj: obj, old: rq.old, ns: ns})
				ignored = ignored || err != nil
				obj = out
			}
		}
		if ignored != rq.ignored {
			t.Errorf("a policy failed: %v, want %v", ignored, rq.ignored)
		}
		acc, _ := metaAccessor(obj)
		results = append(results, acc)
	}
	acc := results[0]
	if !maps.Equal(acc.GetAnnotations(), want(rq, true)) || !maps.Equal(acc.GetLabels(), want(rq, false)) {
		t.Errorf("after admission: annotations %v, labels %v; want %v, %v", acc.GetAnnotations(), acc.GetLabels(), want(rq, true), want(rq, false))
	}
	if !maps.Equal(acc.GetAnnotations(), results[1].GetAnnotations()) || !maps.Equal(acc.GetLabels(), results[1].GetLabels()) {
		t.Errorf("policies in reverse order: annotations %v, labels %v; in file order %v, %v",
			results[1].GetAnnotations(), results[1].GetLabels(), acc.GetAnnotations(), acc.GetLabels())
	}
	if rq.ignored || rq.unwatched {
		return
	}
	// What the controller would do next: nothing, for what was set.
	target := set.Targets[rq.gvr]
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(acc)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: u}
	ns := &metav1.ObjectMeta{Labels: rq.ns}
	if rq.nsIgnored {
		ns.Annotations = map[string]string{rulefile.IgnoreAnnotation: "true"}
	}
	d, err := reconcile.Decide(target, obj, source.Namespaces(func(string) (metav1.Object, bool) { return ns, true }), reconcile.FieldManager)
	if err != nil {
		t.Fatal(err)
	}
	for k := range d.Change.Annotations {
		if !slices.Contains(rq.controller, k) {
			t.Errorf("the controller would still change annotation %s: %s", k, testutil.MustJSON(d.Change))
		}
	}
	if len(d.Change.Labels) > 0 {
		t.Errorf("the controller would still change labels: %s", testutil.MustJSON(d.Change))
	}
}

// want is what the request wants of annotations (or labels): unless it
// says, what the object had.
func want(rq request, anns bool) map[string]string {
	acc, _ := metaAccessor(rq.obj)
	switch {
	case anns && rq.wantAnns != nil:
		return rq.wantAnns
	case anns:
		return acc.GetAnnotations()
	case rq.wantLabels != nil:
		return rq.wantLabels
	}
	return acc.GetLabels()
}
