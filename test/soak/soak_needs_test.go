package soak

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// reloadList is what the soak knew when it put generation gen+1 of the
// rules in place.
//
// An object the list did not see carry what generation gen wants, and
// that the controller then wrote as generation gen wants, needs one more
// write, to generation gen+1: the controller wrote what the rules in force
// wanted, after the list and before it switched to the new file (or, in
// flight, just after). Once, counted from the audit log: a second list,
// made once the controller had switched, missed every such object that
// the controller had meanwhile written again as generation gen+1 wants,
// which it does at hundreds of objects a second while the list takes
// seconds (in a failed run, 1,135 of 5,701 writes of an older generation
// went uncounted that way, 0.05 of the 1.07 PATCH requests per needed
// change).
type reloadList struct {
	gen int
	// listed is when the list began.
	listed time.Time
	// renamed is when the new file was put in place: an object deleted
	// before will not get the write.
	renamed time.Time
	// converged are the objects the list saw carry what generation gen
	// wants.
	converged map[string]bool
}

// crdCycle is what the deletion of the Frigate CRD took: keys, the
// Frigates, when the rules in place were of generation gen.
type crdCycle struct {
	gen  int
	keys map[string]bool
}

// key names r as the audit log does: "resource namespace/name".
func (r soakRef) key() string { return r.gvr.Resource + " " + r.namespace + "/" + r.name }

// objectKey names o as the audit log does.
func objectKey(o *unstructured.Unstructured) string {
	r := soakRef{gvr: h.ConfigMaps, namespace: o.GetNamespace(), name: o.GetName()}
	if o.GetKind() == "Frigate" {
		r.gvr = h.Frigates
	}
	return r.key()
}

// convergedGen is the generation of the rules whose every annotation and
// label an object with annotations and labels carries exactly, or -1.
func convergedGen(annotations, labels map[string]string) int {
	g := soakGen(annotations)
	if g < 0 || !convergedTo(&metav1.ObjectMeta{Annotations: annotations, Labels: labels}, g) {
		return -1
	}
	return g
}

// soakNeeds counts, from byObject, every write to each object as the audit
// log tells it, sorted by resourceVersion: reloadWrites, the needed changes
// of the reloads that their lists could not see (see reloadList); and
// cycledBehind, the Frigates that did not carry what the rules wanted when
// the CRD's deletion took them, whose pending write will not happen. The
// Frigates are judged by the last write to each, not by a list made
// before the deletion: the controller writes Frigates until they are
// deleted, seconds after that list.
// removed are when objects were deleted.
func soakNeeds(byObject map[string][]auditWrite, reloads []reloadList, cycled crdCycle, removed map[string]time.Time) (reloadWrites, cycledBehind int) {
	for key, writes := range byObject {
		for _, rl := range reloads {
			at, gone := removed[key]
			if !rl.converged[key] && (!gone || at.After(rl.renamed)) && wroteGen(writes, rl.gen, rl.listed) {
				reloadWrites++
			}
		}
		if cycled.keys[key] && writes[len(writes)-1].converged != cycled.gen {
			cycledBehind++
		}
	}
	return reloadWrites, cycledBehind
}

// wroteGen reports whether the controller, in a request received from
// since on, made an object of writes carry what generation gen wants.
func wroteGen(writes []auditWrite, gen int, since time.Time) bool {
	for _, w := range writes {
		if w.controller && w.converged == gen && !w.received.Before(since) {
			return true
		}
	}
	return false
}
