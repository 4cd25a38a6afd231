package rulestest

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// SetController makes owner, when not nil, the controller owner of u:
// its one ownerReferences entry, with controller: true, as a workload
// controller writes it.
func SetController(u, owner *unstructured.Unstructured) {
	if owner == nil {
		return
	}
	yes := true
	u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(), UID: owner.GetUID(), Controller: &yes}})
}
