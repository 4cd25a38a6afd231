package admission

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// selectTests are the objects the policies select: by namespace, by the
// namespace's labels, by the object's labels and name, less those that opt
// out, and no audit rule.
var selectTests = []translateTest{
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
}
