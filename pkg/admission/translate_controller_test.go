package admission

import (
	"strings"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// controllerTests are what admission leaves to the controller, with the
// notes that say so: removals, values it cannot read (a wildcard, the
// namespace, a Pod's Node), and the keys a rule earlier in the file may
// set from them.
var controllerTests = []translateTest{
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
		notes:    []string{"rule zone: annotations.zone: " + errFromRelated(source.Node).Error() + "; the controller sets it"},
		requests: []request{
			{name: "the literal only, not the default", gvr: pods, obj: pod("ns", "p"),
				wantAnns: map[string]string{"a": "1", podMarker: "a"}, controller: []string{"zone"}},
		}}, {name: "key sets read from related objects are the controller's, and the keys they may copy",
		rules: "rules:\n- {name: copy, resources: [configmaps], labels: {a: '1'}, copy: [{fromNamespace: {labels: [team*]}}]}\n" +
			"- {name: later, resources: [configmaps], labels: {team-x: y, b: '2'}}\n",
		policies: []string{"copy", "later"},
		notes: []string{
			`rule copy: copy: fromNamespace labels "team*": copied by the controller, which follows the objects it is read from; the labels the rule copies after it are too`,
			`rule later: labels.team-x: left to the controller: rule copy, earlier in the file, may copy it (copy fromNamespace labels "team*")`,
		},
		requests: []request{
			{name: "the literals only", gvr: configMaps, obj: cm("ns", "x", nil, nil, nil), ns: map[string]string{"team-a": "1"},
				wantLabels: map[string]string{"a": "1", "b": "2"}, wantAnns: map[string]string{marker: "label:a,label:b"}, controllerLabels: []string{"team-a", "team-x"}},
		}},
	{name: "key sets computed in CEL follow the object at UPDATE, but for a key the request changes",
		rules:    "rules:\n- {name: data, resources: [configmaps], copy: [{cel: {labels: \"has(object.data) ? object.data : {}\"}}]}\n",
		policies: []string{"data"},
		requests: []request{
			{name: "created", gvr: configMaps, obj: cm("ns", "x", nil, nil, map[string]string{"k": "1"}),
				wantLabels: map[string]string{"k": "1"}, wantAnns: map[string]string{marker: "label:k"}},
			{name: "the data changed: the key follows", gvr: configMaps,
				old:        cm("ns", "x", map[string]string{marker: "label:k"}, map[string]string{"k": "1"}, map[string]string{"k": "1"}),
				obj:        cm("ns", "x", map[string]string{marker: "label:k"}, map[string]string{"k": "1"}, map[string]string{"k": "2"}),
				wantLabels: map[string]string{"k": "2"}, wantAnns: map[string]string{marker: "label:k"}},
			{name: "the request changes the key: it is kept, someone else's", gvr: configMaps,
				old:        cm("ns", "x", map[string]string{marker: "label:k"}, map[string]string{"k": "1"}, map[string]string{"k": "1"}),
				obj:        cm("ns", "x", map[string]string{marker: "label:k"}, map[string]string{"k": "mine"}, map[string]string{"k": "2"}),
				wantLabels: map[string]string{"k": "mine"}, wantAnns: map[string]string{marker: "label:k"},
				controller: []string{marker}}, // which then stops listing it
			{name: "a key the policy did not set: kept", gvr: configMaps,
				old:        cm("ns", "x", nil, map[string]string{"k": "1"}, map[string]string{"k": "1"}),
				obj:        cm("ns", "x", nil, map[string]string{"k": "1"}, map[string]string{"k": "2"}),
				wantLabels: map[string]string{"k": "1"}},
		}},
	{name: "key sets computed in CEL: one annotation per container",
		rules: "rules:\n- name: apparmor\n  resources: [pods, configmaps]\n  annotations: {team: a}\n  removeLabels: [gone]\n" +
			"  copy:\n  - cel: {annotations: \"has(object.spec) ? object.spec.containers.transformMapEntry(i, c, {'container.apparmor.security.beta.kubernetes.io/' + c.name: 'runtime/default'}) : {}\"}\n" +
			"  - cel: {labels: \"has(object.data) ? object.data : {}\"}\n",
		policies: []string{"apparmor"},
		notes:    []string{"rule apparmor: removeLabels: " + removalReason},
		requests: []request{
			{name: "a Pod: one per container", gvr: pods, obj: podWith("web", "side"),
				wantAnns: map[string]string{"team": "a", "container.apparmor.security.beta.kubernetes.io/web": "runtime/default",
					"container.apparmor.security.beta.kubernetes.io/side": "runtime/default",
					podMarker: "container.apparmor.security.beta.kubernetes.io/side,container.apparmor.security.beta.kubernetes.io/web,team"}},
			{name: "a Pod that states its own: kept", gvr: pods,
				obj: withAnnotations(podWith("web", "side"), map[string]string{"container.apparmor.security.beta.kubernetes.io/web": "unconfined"}),
				wantAnns: map[string]string{"team": "a", "container.apparmor.security.beta.kubernetes.io/web": "unconfined",
					"container.apparmor.security.beta.kubernetes.io/side": "runtime/default",
					podMarker: "container.apparmor.security.beta.kubernetes.io/side,team"}},
			{name: "keys and values that are not valid, and the rule's own: not copied", gvr: configMaps,
				obj:        cm("ns", "x", nil, map[string]string{"keep": "mine"}, map[string]string{"ok": "1", "bad key": "2", "gone": "3", "long": strings.Repeat("x", 64), "keep": "theirs"}),
				wantAnns:   map[string]string{"team": "a", marker: "label:ok,team"},
				wantLabels: map[string]string{"ok": "1", "keep": "mine"}},
		}},
	{name: "what reads ownerObject is the controller's",
		rules: "rules:\n- {name: role, resources: [pods], ownerObject: {through: [deployments]}, labels: {a: '1', role: {cel: \"ownerObject.?status.?stableRS.orValue('') == 'x' ? 'stable' : 'canary'\"}}}\n" +
			"- {name: big, resources: [pods], ownerObject: {through: [deployments]}, when: 'ownerObject.spec.replicas > 1', labels: {big: 'true'}}\n",
		policies: []string{"role"},
		notes: []string{"rule role: labels.role: " + errOwnerObject.Error() + "; the controller sets it",
			"rule big: when: " + errOwnerObject.Error() + ": the controller enforces the whole rule"},
		requests: []request{
			{name: "the literal only", gvr: pods, obj: pod("ns", "p"),
				wantLabels: map[string]string{"a": "1"}, wantAnns: map[string]string{podMarker: "label:a"}, controller: []string{"role", "big"}},
		}},
}
