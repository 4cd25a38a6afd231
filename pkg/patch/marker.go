package patch

import (
	"maps"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// MarkerDomain ends the prefix of every marker annotation's key (see
// MarkerKey).
const MarkerDomain = "admission.kube-annotator.io"

// MarkerLabel prefixes a label key in a marker's value; annotation keys are
// listed as they are. No annotation or label key contains a colon or a
// comma, so a value is never ambiguous.
const MarkerLabel = "label:"

// MarkerKey returns the annotation in which the admission policies of the
// field manager manager list the keys they set on an object of the
// resource gr: "<resource>[.<group>].admission.kube-annotator.io/<manager>",
// such as "deployments.apps.admission.kube-annotator.io/kube-annotator".
// It returns "" when they cannot form an annotation key (a manager that is a
// DNS label and a resource as the API server names it can); such a
// manager has no admission policies there and no marker.
//
// The API server records no owner for a key that a mutating admission
// policy sets: the managedFields of the request that created or updated the
// object are computed before admission, and list only what the client sent.
// The marker is that record instead, kept on the object like managedFields.
// It names the resource because controllers copy annotations from one kind
// to another (kube-controller-manager copies a Deployment's onto its
// ReplicaSets): a marker copied so names the resource it was written for,
// and says nothing of the object it was copied onto.
func MarkerKey(manager string, gr schema.GroupResource) string {
	id := markerID{manager, gr}
	markerKeys.RLock()
	key, found := markerKeys.m[id]
	markerKeys.RUnlock()
	if found {
		return key
	}
	key = markerKey(manager, gr)
	markerKeys.Lock()
	if markerKeys.m == nil || len(markerKeys.m) >= maxMarkerKeys {
		markerKeys.m = make(map[markerID]string)
	}
	markerKeys.m[id] = key
	markerKeys.Unlock()
	return key
}

// markerID names a marker: its field manager and resource.
type markerID struct {
	manager string
	gr      schema.GroupResource
}

// markerKeys memoizes markerKey, which validates the key it forms, for
// MarkerKey, which every sync calls. It is emptied when it reaches
// maxMarkerKeys.
var markerKeys struct {
	sync.RWMutex
	m map[markerID]string
}

// maxMarkerKeys bounds markerKeys: a controller has one field manager and
// a few resources.
const maxMarkerKeys = 1024

// markerKey forms and validates the key MarkerKey returns.
func markerKey(manager string, gr schema.GroupResource) string {
	prefix := gr.Resource
	if gr.Group != "" {
		prefix += "." + gr.Group
	}
	key := prefix + "." + MarkerDomain + "/" + manager
	if manager == "" || gr.Resource == "" || len(validation.IsQualifiedName(key)) > 0 {
		return ""
	}
	return key
}

// IsMarker reports whether an annotation key is one that MarkerKey returns,
// for some field manager and resource.
func IsMarker(key string) bool {
	prefix, _, ok := strings.Cut(strings.ToLower(key), "/")
	return ok && strings.HasSuffix(prefix, "."+MarkerDomain)
}

// ParseMarker returns the keys a marker's value lists: comma-separated
// annotation keys, and label keys prefixed with MarkerLabel. Empty entries
// and the format entry (MarkerFormatPrefix) are ignored; check the format
// first with MarkerReadable.
func ParseMarker(value string) Owned {
	var o Owned
	for entry := range strings.SplitSeq(value, ",") {
		entry = strings.TrimSpace(entry)
		switch {
		case entry == "", strings.HasPrefix(entry, MarkerFormatPrefix):
		case strings.HasPrefix(entry, MarkerLabel):
			if k := strings.TrimPrefix(entry, MarkerLabel); k != "" {
				o.Labels = addKey(o.Labels, k)
			}
		default:
			o.Annotations = addKey(o.Annotations, entry)
		}
	}
	return o
}

// FormatMarker is the marker value that lists o's keys, sorted: the form
// the admission policies write. It is "" when o has no keys.
func FormatMarker(o Owned) string {
	entries := slices.Collect(maps.Keys(o.Annotations))
	for k := range o.Labels {
		entries = append(entries, MarkerLabel+k)
	}
	slices.Sort(entries)
	return strings.Join(entries, ",")
}

// OwnedOrMarked returns the keys manager owns in managedFields together
// with those the marker annotation marker lists on an object with
// annotations: what reconciling counts as owned. Most objects carry no
// marker; their keys are OwnedBy's, not copied again.
func OwnedOrMarked(managedFields []metav1.ManagedFieldsEntry, manager string, annotations map[string]string, marker string) Owned {
	o := OwnedBy(managedFields, manager)
	if m := MarkedKeys(annotations, marker); len(m.Annotations)+len(m.Labels) > 0 {
		return o.Union(m)
	}
	return o
}

// MarkedKeys returns the keys that the marker annotation marker (from
// MarkerKey; "" for none) lists on an object with annotations: keys an
// admission policy set, which count as owned, as though the field manager
// had written them. The marker itself is never among them, nor any key of
// a marker of a newer format (MarkerReadable).
func MarkedKeys(annotations map[string]string, marker string) Owned {
	value, ok := annotations[marker]
	if marker == "" || !ok || !MarkerReadable(value) {
		return Owned{}
	}
	o := ParseMarker(value)
	delete(o.Annotations, marker)
	return o
}

// Union returns the keys of o and p, in new maps.
func (o Owned) Union(p Owned) Owned {
	return Owned{Annotations: union(o.Annotations, p.Annotations), Labels: union(o.Labels, p.Labels)}
}

// PlanMarked is Plan for an object that may carry the marker annotation
// marker (from MarkerKey; "" for none), where owned includes the keys the
// marker lists (MarkedKeys), so that a key an admission policy set is
// deleted when no rule wants it any more, exactly like a key the controller
// set. The marker itself is never deleted as an owned key. When the change
// is not empty, it also rewrites the marker to list only the listed keys
// that remain after the change, or deletes the marker when none does; an
// object that needs no other change is never written for its marker alone.
// A marker of a newer format (MarkerReadable) is left as it is.
func PlanMarked(annotations, labels map[string]string, owned Owned, marker string, d Desired) Change {
	value, marked := annotations[marker]
	if marker == "" || !marked {
		return Plan(annotations, labels, owned, d)
	}
	if owned.Annotations[marker] {
		owned = owned.Union(Owned{})
		delete(owned.Annotations, marker)
	}
	change := Plan(annotations, labels, owned, d)
	if change.Empty() || !MarkerReadable(value) {
		return change
	}
	listed := MarkedKeys(annotations, marker)
	remain := Owned{Annotations: remaining(listed.Annotations, annotations, change.Annotations), Labels: remaining(listed.Labels, labels, change.Labels)}
	next := FormatMarker(remain)
	switch {
	case next == "":
		change.Annotations = setKey(change.Annotations, marker, nil)
	case next != value:
		change.Annotations = setKey(change.Annotations, marker, &next)
	}
	return change
}

// Unmark returns change, to be made on an object with annotations, with
// the marker annotation marker rewritten so that it no longer lists the
// keys of gone: keys an admission policy set that someone else has changed
// since, and so are no longer the field manager's. Unlike PlanMarked, it
// writes the marker even when change is otherwise empty, once: a key that
// stays listed would be deleted as owned when no rule wants it any more.
// A marker of a newer format (MarkerReadable) is left as it is.
func Unmark(change Change, annotations map[string]string, marker string, gone Owned) Change {
	value, marked := annotations[marker]
	if marker == "" || !marked || len(gone.Annotations)+len(gone.Labels) == 0 || !MarkerReadable(value) {
		return change
	}
	if v, changed := change.Annotations[marker]; changed {
		if v == nil {
			return change
		}
		value = *v
	}
	o := ParseMarker(value)
	for k := range gone.Annotations {
		delete(o.Annotations, k)
	}
	for k := range gone.Labels {
		delete(o.Labels, k)
	}
	switch next := FormatMarker(o); {
	case next == "":
		change.Annotations = setKey(change.Annotations, marker, nil)
	case next != value:
		change.Annotations = setKey(change.Annotations, marker, &next)
	}
	return change
}

// union returns the keys of a and b in a new map, or nil when there are none.
func union(a, b map[string]bool) map[string]bool {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make(map[string]bool, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// remaining returns the keys of listed that current still has once change
// is made.
func remaining(listed map[string]bool, current map[string]string, change map[string]*string) map[string]bool {
	var out map[string]bool
	for k := range listed {
		v, changed := change[k]
		_, present := current[k]
		if (changed && v != nil) || (!changed && present) {
			out = addKey(out, k)
		}
	}
	return out
}

func addKey(m map[string]bool, k string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[k] = true
	return m
}

func setKey(m map[string]*string, k string, v *string) map[string]*string {
	if m == nil {
		m = map[string]*string{}
	}
	m[k] = v
	return m
}
