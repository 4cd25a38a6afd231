package objcache

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// cachedMetadata is an object as the metadata cache keeps it: its kind,
// identity and resourceVersion, the annotations and labels the rules need,
// this controller's managedFields entries, and, when the rules read owners,
// its controller's ownerReferences entry. It is a metav1.Object and a
// runtime.Object, which is what its readers (reconcile.Decide, the event
// recorder) need, in 120 bytes where a PartialObjectMetadata takes 288:
// at a million cached objects, that is 168 MB.
//
// It is read only, as every object in an informer's cache must be: its
// setters panic, and its getters return values shared with the cache (and
// with other cached objects, see Interner). Fields it does not keep read
// as their zero value.
type cachedMetadata struct {
	// proj is how it was projected, with its kind.
	proj            *projected
	name, namespace string
	uid             types.UID
	resourceVersion string
	labels          map[string]string
	annotations     map[string]string
	managedFields   []metav1.ManagedFieldsEntry
	// controller is the ownerReferences entry with controller: true, when
	// the projector keeps owners (nil otherwise, or when it has none).
	controller *metav1.OwnerReference
}

// readOnly is the panic of a setter of a cached object.
const readOnly = "kube-annotator: cached objects are read only"

var _ Object = (*cachedMetadata)(nil)

// kindOf is the kind of a resource's cached objects, which they share.
type kindOf struct{ gvk schema.GroupVersionKind }

func (k *kindOf) GroupVersionKind() schema.GroupVersionKind   { return k.gvk }
func (k *kindOf) SetGroupVersionKind(schema.GroupVersionKind) { panic(readOnly) }

// GetObjectKind returns the object's kind; it is read only.
func (o *cachedMetadata) GetObjectKind() schema.ObjectKind { return &o.proj.by.kind }

// DeepCopyObject returns a copy that shares nothing with o.
func (o *cachedMetadata) DeepCopyObject() runtime.Object {
	c := *o
	c.labels, c.annotations = maps.Clone(o.labels), maps.Clone(o.annotations)
	c.managedFields = slices.Clone(o.managedFields)
	if o.controller != nil {
		c.controller = o.controller.DeepCopy()
	}
	for i := range c.managedFields {
		o.managedFields[i].DeepCopyInto(&c.managedFields[i])
	}
	return &c
}

// metav1.Object: the getters of what the cache keeps, zero values for
// what it does not, and setters that panic.

func (o *cachedMetadata) GetNamespace() string                          { return o.namespace }
func (o *cachedMetadata) GetName() string                               { return o.name }
func (o *cachedMetadata) GetUID() types.UID                             { return o.uid }
func (o *cachedMetadata) GetResourceVersion() string                    { return o.resourceVersion }
func (o *cachedMetadata) GetLabels() map[string]string                  { return o.labels }
func (o *cachedMetadata) GetAnnotations() map[string]string             { return o.annotations }
func (o *cachedMetadata) GetManagedFields() []metav1.ManagedFieldsEntry { return o.managedFields }
func (o *cachedMetadata) GetGenerateName() string                       { return "" }
func (o *cachedMetadata) GetGeneration() int64                          { return 0 }
func (o *cachedMetadata) GetSelfLink() string                           { return "" }
func (o *cachedMetadata) GetCreationTimestamp() metav1.Time             { return metav1.Time{} }
func (o *cachedMetadata) GetDeletionTimestamp() *metav1.Time            { return nil }
func (o *cachedMetadata) GetDeletionGracePeriodSeconds() *int64         { return nil }
func (o *cachedMetadata) GetFinalizers() []string                       { return nil }
func (o *cachedMetadata) GetOwnerReferences() []metav1.OwnerReference {
	if o.controller == nil {
		return nil
	}
	return []metav1.OwnerReference{*o.controller}
}

// Controller returns the object's ownerReferences entry with controller:
// true, without a copy, or nil: see source.ControllerOf. It is read only.
func (o *cachedMetadata) Controller() *metav1.OwnerReference { return o.controller }

func (o *cachedMetadata) SetNamespace(string)                          { panic(readOnly) }
func (o *cachedMetadata) SetName(string)                               { panic(readOnly) }
func (o *cachedMetadata) SetGenerateName(string)                       { panic(readOnly) }
func (o *cachedMetadata) SetUID(types.UID)                             { panic(readOnly) }
func (o *cachedMetadata) SetResourceVersion(string)                    { panic(readOnly) }
func (o *cachedMetadata) SetGeneration(int64)                          { panic(readOnly) }
func (o *cachedMetadata) SetSelfLink(string)                           { panic(readOnly) }
func (o *cachedMetadata) SetCreationTimestamp(metav1.Time)             { panic(readOnly) }
func (o *cachedMetadata) SetDeletionTimestamp(*metav1.Time)            { panic(readOnly) }
func (o *cachedMetadata) SetDeletionGracePeriodSeconds(*int64)         { panic(readOnly) }
func (o *cachedMetadata) SetLabels(map[string]string)                  { panic(readOnly) }
func (o *cachedMetadata) SetAnnotations(map[string]string)             { panic(readOnly) }
func (o *cachedMetadata) SetFinalizers([]string)                       { panic(readOnly) }
func (o *cachedMetadata) SetOwnerReferences([]metav1.OwnerReference)   { panic(readOnly) }
func (o *cachedMetadata) SetManagedFields([]metav1.ManagedFieldsEntry) { panic(readOnly) }
