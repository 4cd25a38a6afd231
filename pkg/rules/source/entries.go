package source

import "k8s.io/apimachinery/pkg/runtime/schema"

// Namespace is the namespace of an object, which namespaceSelector
// selects by and {fromNamespace: {label: KEY}}, CEL's namespaceObject and
// the opt-out read: for a namespaced object, the Namespace named in its
// metadata.namespace; for a Namespace, itself.
var Namespace = &Source{
	Field:    "fromNamespace",
	Resource: Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Kind: "Namespace"},
	Self:     schema.GroupResource{Resource: "namespaces"},
	Ref:      []string{"metadata", "namespace"},
	What:     "the namespace",
	Unset:    "the object is cluster-scoped and has no namespace to read",
	Reason:   "rules select by namespace labels or read namespaces, or namespaces may opt out",
}

// Node is the Node of a Pod, which {fromNode: {label: KEY}} and
// {fromNode: {annotation: KEY}} read: the Node named in the Pod's
// spec.nodeName. A Pod not yet scheduled names none; it gets the key once
// it is bound to a Node.
var Node = &Source{
	Field:       "fromNode",
	Resource:    Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, Kind: "Node"},
	For:         schema.GroupResource{Resource: "pods"},
	Names:       []string{"pods", "pod", "po", "pods.v1", "pod.v1", "po.v1"},
	Ref:         []string{"spec", "nodeName"},
	What:        "the Pod's Node",
	Unset:       "the Pod is not scheduled yet: it names no Node in spec.nodeName",
	NoAdmission: "admission policies cannot read a Node, and a Pod has none yet when it is created",
}

// all are the entries, in the order the docs list them: the namespace,
// then the related ones, which rules read only through their value form.
var all = append([]*Source{Namespace}, related...)

// related are the entries read only through their value form
// ({fromNode: …}, {fromOwner: …}, {fromRef: …}), in the order the docs list them.
var related = []*Source{Node, Owner, Ref}
