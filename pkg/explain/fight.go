package explain

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kube-annotator/kube-annotator/pkg/fight"
)

// Fight is a fight of the controller over an object, as its last
// Warning event (reason fight.Reason) on the object tells: explain runs
// apart from the controller, and the events are where the controller says
// so (run --events).
type Fight struct {
	fight.Fight
	// Reported is when the controller last reported the fight.
	Reported time.Time `json:"reported"`
	// Ongoing is set when that is recent enough for the fight to go on:
	// the controller reports a fight again at least every
	// fight.Quiet+fight.BackoffMax while it lasts.
	Ongoing bool `json:"ongoing"`
}

// coreEvents are core/v1 Events, which list by the object's UID and reason
// on every supported server; events.k8s.io Events are the same objects.
var coreEvents = schema.GroupVersionResource{Version: "v1", Resource: "events"}

// FightOf returns the last fight the controller reported on the object
// uid in namespace ns ("" for a cluster-scoped object, whose events are in
// default), or nil when it reported none.
func FightOf(ctx context.Context, dyn dynamic.Interface, ns string, uid types.UID, now time.Time) (*Fight, error) {
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	sel := fields.AndSelectors(fields.OneTermEqualSelector("involvedObject.uid", string(uid)), fields.OneTermEqualSelector("reason", fight.Reason))
	list, err := dyn.Resource(coreEvents).Namespace(ns).List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("list the object's events in %s: %w", ns, err)
	}
	var last *Fight
	for i := range list.Items {
		e := &list.Items[i]
		message, _, _ := unstructured.NestedString(e.Object, "message")
		f, ok := fight.ParseNote(message)
		if !ok {
			continue
		}
		if at := eventTime(e); last == nil || at.After(last.Reported) {
			last = &Fight{Fight: f, Reported: at}
		}
	}
	if last != nil {
		last.Ongoing = now.Sub(last.Reported) <= fight.Quiet+fight.BackoffMax
	}
	return last, nil
}

// eventTime is when an event was last observed: its series' last
// observation, its eventTime, its lastTimestamp or, failing those, its
// creation.
func eventTime(e *unstructured.Unstructured) time.Time {
	for _, path := range [][]string{{"series", "lastObservedTime"}, {"eventTime"}, {"lastTimestamp"}} {
		if s, ok, _ := unstructured.NestedString(e.Object, path...); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t
			}
		}
	}
	return e.GetCreationTimestamp().Time
}
