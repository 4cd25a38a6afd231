package controller

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/controller/informer"
	"github.com/kube-annotator/kube-annotator/pkg/controller/objcache"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
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
	// Unknown are the resources of the set whose objects are not cached
	// as the set needs them — not ruled yet, or cached without the values
	// or keys a new rule reads to decide — and so are not counted. (A key
	// a new rule only sets, which the cache does not keep, counts as
	// missing: an object that carries it already counts as changed.)
	Unknown []schema.GroupVersionResource
}

// Preview decides, for every cached object of the resources set rules, what
// set would change on it, as sync would decide it (reconcile.Decide, with
// the namespaces and related objects as cached); and, for every cached object of a recorded
// resource that set no longer names, what its prune would delete. It reads
// only the caches and writes nothing.
func (c *Controller) Preview(set *rules.Set) Preview {
	p := Preview{PerRule: map[string]int{}}
	toPrune := reconcile.ToPrune(c.opts.Record.Recorded(), set)
	c.mu.RLock()
	type cachedBy struct {
		ri   *informer.Informer
		res  source.Resource
		keep projection.Projection
	}
	informers := map[schema.GroupResource]cachedBy{}
	for gr, r := range c.resources {
		if r.informer != nil {
			informers[gr] = cachedBy{r.informer, r.target.Resource, r.informer.Projection}
		}
	}
	c.mu.RUnlock()
	for _, t := range set.SortedTargets() {
		cb := informers[t.GVR.GroupResource()]
		ri := cb.ri
		if ri == nil || ri.GVR != t.GVR || !cb.keep.Covers(t.Reads()) || !ri.ServesAll(t.Reads) {
			p.Unknown = append(p.Unknown, t.GVR)
			continue
		}
		c.preview(&p, t, ri)
	}
	for _, gr := range toPrune {
		if cb, ok := informers[gr]; ok {
			c.preview(&p, reconcile.Prune(cb.res), cb.ri)
		}
	}
	return p
}

// preview adds to p what t would change on the objects ri caches.
func (c *Controller) preview(p *Preview, t *rules.Target, ri *informer.Informer) {
	for _, obj := range ri.Informer.GetStore().List() {
		o, ok := obj.(objcache.Object)
		if !ok {
			continue
		}
		d, err := reconcile.Decide(t, o, c.look, c.opts.FieldManager)
		if err != nil || d.Empty() {
			continue
		}
		p.Total++
		seen := map[string]bool{}
		for _, ch := range d.Changes(o) {
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
