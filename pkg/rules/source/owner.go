package source

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Owner is the controller owner of an object, which {fromOwner: {label:
// KEY}} reads: the object that its ownerReferences entry with controller:
// true names, matched by UID, and that object's owner in turn, walked
// through the owner resources a rule allows (DefaultOwners and any it
// names). It is the entry of the table; the objects of each owner
// resource are the source OwnerOf returns for it, which the controller
// watches and the Lookup finds.
var Owner = &Source{
	Field:       "fromOwner",
	Ref:         []string{"metadata", "ownerReferences"},
	What:        "the owner",
	Unset:       "the object has no controller owner",
	Reason:      "rules read values from owners",
	NoAdmission: "admission policies cannot read an owner, and its owner chain may not be complete when an object is created",
	IsOwner:     true,
}

// DefaultOwners are the owner resources that {fromOwner: …} walks through
// when a rule names no others: the workload controllers of Kubernetes
// itself, which own Pods (ReplicaSets, StatefulSets, DaemonSets, Jobs) and
// what owns those (Deployments, CronJobs).
var DefaultOwners = []string{"replicasets.apps", "deployments.apps", "statefulsets.apps", "daemonsets.apps", "jobs.batch", "cronjobs.batch"}

// owners interns the source of each owner resource by its GVR and the
// fields its cache keeps, so that every rule set compiled from every
// reload names one source, and one informer, per owner resource and
// fields kept.
var owners sync.Map // ownerKey → *Source

// ownerKey identifies a source of OwnerOf.
type ownerKey struct {
	gvr  schema.GroupVersionResource
	keep string
}

// OwnerOf returns the source of the owner objects of res: an entry like
// Owner whose Resource is res, the same one for the same resource. keep
// are the paths of the fields its cache keeps besides the metadata and
// selector (Source.Keep), for CEL's ownerObject; the same paths, in any
// order, give the same source.
func OwnerOf(res Resource, keep ...[]string) *Source {
	keep = slices.Clone(keep)
	slices.SortFunc(keep, slices.Compare)
	keep = slices.CompactFunc(keep, slices.Equal)
	var names []string
	for _, p := range keep {
		names = append(names, strings.Join(p, "\x00"))
	}
	key := ownerKey{res.GVR, strings.Join(names, "\x01")}
	if s, ok := owners.Load(key); ok {
		return s.(*Source)
	}
	s := *Owner
	s.Resource, s.Keep = res, keep
	s.What = "the owning " + res.Kind
	s.Reason = fmt.Sprintf("rules read values from owners of kind %s", res.Kind)
	if len(keep) > 0 {
		s.Reason = fmt.Sprintf("rules read the fields of owners of kind %s in CEL (ownerObject)", res.Kind)
	}
	got, _ := owners.LoadOrStore(key, &s)
	return got.(*Source)
}

// KeptChanged reports whether a field that the cache of s, an owner
// source, keeps for CEL (Keep) differs between old and new, two of its
// objects as it caches them (Content).
func (s *Source) KeptChanged(old, new metav1.Object) bool {
	a, ok1 := old.(Content)
	b, ok2 := new.(Content)
	if len(s.Keep) == 0 || !ok1 || !ok2 {
		return false
	}
	for _, p := range s.Keep {
		if !reflect.DeepEqual(fieldAt(a.UnstructuredContent(), p), fieldAt(b.UnstructuredContent(), p)) {
			return true
		}
	}
	return false
}

// fieldAt returns the value at path p of m, a Content's fields, whose
// maps of strings may be map[string]string; nil when there is none.
func fieldAt(m map[string]any, p []string) any {
	var v any = m
	for _, k := range p {
		switch c := v.(type) {
		case map[string]any:
			v = c[k]
		case map[string]string:
			s, ok := c[k]
			if !ok {
				return nil
			}
			v = s
		default:
			return nil
		}
	}
	return v
}

// ControllerOf returns the ownerReferences entry of obj with controller:
// true, which names the object that manages it, and whether it has one.
// obj may be a cached object that keeps its ownerReferences only among
// its fields (a Content).
func ControllerOf(obj metav1.Object) (metav1.OwnerReference, bool) {
	if c, ok := obj.(interface{ Controller() *metav1.OwnerReference }); ok {
		if ref := c.Controller(); ref != nil {
			return *ref, true
		}
	}
	if ref := metav1.GetControllerOfNoCopy(obj); ref != nil {
		return *ref, true
	}
	u, ok := obj.(Content)
	if !ok {
		return metav1.OwnerReference{}, false
	}
	md, _ := u.UnstructuredContent()["metadata"].(map[string]any)
	refs, _ := md["ownerReferences"].([]any)
	for _, r := range refs {
		m, _ := r.(map[string]any)
		c, _ := m["controller"].(bool)
		if !c {
			continue
		}
		ref := metav1.OwnerReference{Controller: &c}
		ref.APIVersion, _ = m["apiVersion"].(string)
		ref.Kind, _ = m["kind"].(string)
		ref.Name, _ = m["name"].(string)
		uid, _ := m["uid"].(string)
		ref.UID = types.UID(uid)
		return ref, true
	}
	return metav1.OwnerReference{}, false
}

// Owns reports whether ref names an object of s, an owner source: one of
// its kind in its API group, at any version.
func (s *Source) Owns(ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == s.Resource.GVR.Group && ref.Kind == s.Resource.Kind
}

// Selecting returns obj's controller owner reference and the label keys
// by which that owner selects it (SelectorKeys), when the owner is an
// object of one of srcs that look finds; else no keys.
func Selecting(obj metav1.Object, srcs []*Source, look Lookup) (metav1.OwnerReference, []string) {
	if look == nil || !slices.ContainsFunc(srcs, func(s *Source) bool { return s.IsOwner }) {
		return metav1.OwnerReference{}, nil // read no owner: none is known
	}
	ref, ok := ControllerOf(obj)
	if !ok {
		return ref, nil
	}
	for _, src := range srcs {
		if src.IsOwner && src.Owns(ref) {
			if owner, ok := look.Find(src, src.NamespaceFor(obj), ref.Name); ok && owner.GetUID() == ref.UID {
				return ref, SelectorKeys(owner)
			}
		}
	}
	return ref, nil
}

// SelectorKeys returns the label keys by which owner, a cached owner
// that keeps its spec.selector (a Content), selects the objects it owns:
// those of its matchLabels and matchExpressions. Changing such a label
// on an object it owns would orphan the object, and make the owner make
// another in its place.
func SelectorKeys(owner metav1.Object) []string {
	u, ok := owner.(Content)
	if !ok {
		return nil
	}
	// Read in place: the cache's content is only read, and a copy per sync
	// would cost more than the rest of the walk.
	field, _, _ := unstructured.NestedFieldNoCopy(u.UnstructuredContent(), "spec", "selector")
	sel, _ := field.(map[string]any)
	var out []string
	if m, ok := sel["matchLabels"].(map[string]any); ok {
		for k := range m {
			out = append(out, k)
		}
	}
	exprs, _ := sel["matchExpressions"].([]any)
	for _, e := range exprs {
		if m, ok := e.(map[string]any); ok {
			if k, ok := m["key"].(string); ok {
				out = append(out, k)
			}
		}
	}
	return out
}
