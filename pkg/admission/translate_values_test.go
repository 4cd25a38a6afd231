package admission

import "k8s.io/apiserver/pkg/authentication/user"

// valueTests are the values admission sets: literal, read from the object
// with JSONPath or CEL, set only if absent, and by the first rule in the
// file when rules conflict.
var valueTests = []translateTest{
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
	{name: "recorded from the request",
		rules: "rules:\n- name: creator\n  resources: [configmaps]\n" +
			"  annotations: {created-by: {cel: request.userInfo.username, once: true, default: unknown}}\n" +
			"  labels: {created-by-admin: {cel: '\"admins\" in request.userInfo.?groups.orValue([]) ? \"yes\" : \"no\"', once: true}}\n",
		policies: []string{"creator"},
		requests: []request{
			{name: "created: who", gvr: configMaps, obj: cm("ns", "x", nil, nil, nil), user: &user.DefaultInfo{Name: "alice", Groups: []string{"admins"}},
				wantAnns:   map[string]string{"created-by": "alice", marker: "created-by,label:created-by-admin"},
				wantLabels: map[string]string{"created-by-admin": "yes"}},
			{name: "created with the key: kept", gvr: configMaps, obj: cm("ns", "x", map[string]string{"created-by": "bob"}, nil, nil), user: &user.DefaultInfo{Name: "alice"},
				wantAnns:   map[string]string{"created-by": "bob", marker: "label:created-by-admin"},
				wantLabels: map[string]string{"created-by-admin": "no"}},
			{name: "updated without the key: the default, not the updater", gvr: configMaps, user: &user.DefaultInfo{Name: "mallory", Groups: []string{"admins"}},
				old: cm("ns", "x", nil, nil, nil), obj: cm("ns", "x", nil, nil, nil),
				wantAnns: map[string]string{"created-by": "unknown", marker: "created-by"}},
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
}
