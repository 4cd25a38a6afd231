package preview

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// NoRule names, in Preview.PerRule, the changes no rule wants: keys this
// controller set that the rules no longer want, which are deleted.
const NoRule = "(no rule)"

// Preview is what putting a set of rules in force would change, as far as
// the caches know.
type Preview struct {
	// Total is the number of cached objects that would change.
	Total int
	// PerRule is, for each rule, the number of objects on which it would
	// change a key (NoRule for keys deleted because no rule wants them).
	// An object changed by two rules counts for both.
	PerRule map[string]int
	// PerNamespace is, for CountChanged, the number of objects changed
	// in each namespace counted; nil for Count.
	PerNamespace map[string]int
	// Unknown are the resources of the set whose objects are not cached
	// as the set needs them — not ruled yet, or cached without the values
	// or keys a new rule reads to decide — and so are not counted. (A key
	// a new rule only sets, which the cache does not keep, counts as
	// missing: an object that carries it already counts as changed.)
	Unknown []schema.GroupVersionResource
}

// Decider decides an object as a sync would: with the related objects
// Look finds, for FieldManager.
type Decider struct {
	Look         source.Lookup
	FieldManager string
}

// Count adds to p what t would change on objs, cached objects of t's
// resource.
func (d Decider) Count(p *Preview, t *rules.Target, objs []any) {
	for _, obj := range objs {
		o, ok := obj.(objcache.Object)
		if !ok {
			continue
		}
		dec, err := reconcile.Decide(t, o, d.Look, d.FieldManager)
		if err != nil || dec.Empty() {
			continue
		}
		p.Total++
		seen := map[string]bool{}
		for _, ch := range dec.Changes(o) {
			rule := ch.Rule
			if rule == "" {
				rule = NoRule
			}
			if !seen[rule] {
				seen[rule] = true
				p.PerRule[rule]++
			}
		}
	}
}

// CountChanged adds to p.PerNamespace, for the objs of the namespaces in,
// those t would change otherwise than before would (nil: a target that
// changes nothing): what new rules change beyond what the rules in force
// still have to.
func (d Decider) CountChanged(p *Preview, t, before *rules.Target, objs []any, in map[string]bool) {
	for _, obj := range objs {
		o, ok := obj.(objcache.Object)
		if !ok || !in[o.GetNamespace()] {
			continue
		}
		dec, err := reconcile.Decide(t, o, d.Look, d.FieldManager)
		if err != nil || dec.Empty() {
			continue
		}
		if before != nil {
			prev, err := reconcile.Decide(before, o, d.Look, d.FieldManager)
			if err == nil && reflect.DeepEqual(prev.Change, dec.Change) {
				continue
			}
		}
		p.Total++
		p.PerNamespace[o.GetNamespace()]++
	}
}
