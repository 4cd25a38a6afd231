package rulestest

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Nodes is a cluster-scoped resource other than namespaces, for tests
// that serve one.
var Nodes = source.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, Kind: "Node"}
