package rulestest

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Pods is the resource whose objects name a related object, their Node
// (source.Node), for tests of fromNode.
var Pods = source.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Kind: "Pod", Namespaced: true}
