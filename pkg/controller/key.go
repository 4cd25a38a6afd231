package controller

import (
	"unique"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
)

// Key identifies one object of one resource in the work queue. It is a
// comparable struct so that the queue deduplicates it without string
// formatting or parsing.
type Key struct {
	GVR       schema.GroupVersionResource
	Namespace string
	Name      string
}

// String formats the key as "resource.version.group namespace/name".
func (k Key) String() string { return reconcile.Ref(k).String() }

// storeKey is the key of the object in its informer's store.
func (k Key) storeKey() string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// queued is a Key as the work queue and its rate limiter hold it: the
// resource as a unique handle, so that it takes 40 bytes instead of 80.
// The queue's maps and slice grow to hold every object of the initial sync
// at once and keep that size, so every byte of the key counts per cached
// object.
type queued struct {
	resource        unique.Handle[schema.GroupVersionResource]
	namespace, name string
}

func (k Key) queued() queued { return queued{unique.Make(k.GVR), k.Namespace, k.Name} }

func (q queued) key() Key { return Key{GVR: q.resource.Value(), Namespace: q.namespace, Name: q.name} }
