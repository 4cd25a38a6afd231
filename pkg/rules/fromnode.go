package rules

import "k8s.io/apimachinery/pkg/runtime/schema"

// NodeSource is the Node of a Pod, which {fromNode: {label: KEY}} and
// {fromNode: {annotation: KEY}} read: the Node named in the Pod's
// spec.nodeName. A Pod not yet scheduled names none; it gets the key once
// it is bound to a Node.
var NodeSource = &RelatedSource{
	Field:    "fromNode",
	Resource: Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, Kind: "Node"},
	For:      schema.GroupResource{Resource: "pods"},
	Names:    []string{"pods", "pod", "po", "pods.v1", "pod.v1", "po.v1"},
	Ref:      []string{"spec", "nodeName"},
	What:     "the Pod's Node",
	Unset:    "the Pod is not scheduled yet: it names no Node in spec.nodeName",
}
