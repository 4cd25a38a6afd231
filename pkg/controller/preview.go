package controller

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/controller/informer"
	"github.com/kube-annotator/kube-annotator/pkg/controller/preview"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// NoRule names, in Preview.PerRule, the changes no rule wants.
const NoRule = preview.NoRule

// Preview is what putting a set of rules in force would change, as far as
// the caches know (package preview).
type Preview = preview.Preview

// Preview decides, for every cached object of the resources set rules, what
// set would change on it, as sync would decide it (reconcile.Decide, with
// the namespaces and related objects as cached); and, for every cached object of a recorded
// resource that set no longer names, what its prune would delete. It reads
// only the caches and writes nothing.
func (c *Controller) Preview(set *rules.Set) Preview {
	p := Preview{PerRule: map[string]int{}}
	d := preview.Decider{Look: c.look, FieldManager: c.opts.FieldManager}
	p.Unknown = c.eachCached(set, func(t *rules.Target, ri *informer.Informer) {
		d.Count(&p, t, ri.Informer.GetStore().List())
	})
	return p
}

// Changed counts, in each of namespaces, the cached objects that set would
// change otherwise than before would, as Preview decides them: what a
// tenant's new rules change beyond what the rules in force still have to.
// Objects of resources not cached as set needs them are not counted;
// before is not nil.
func (c *Controller) Changed(before, set *rules.Set, namespaces []string) map[string]int {
	p := Preview{PerNamespace: map[string]int{}}
	in := map[string]bool{}
	for _, ns := range namespaces {
		in[ns] = true
	}
	d := preview.Decider{Look: c.look, FieldManager: c.opts.FieldManager}
	c.eachCached(set, func(t *rules.Target, ri *informer.Informer) {
		d.CountChanged(&p, t, before.Targets[ri.GVR], ri.Informer.GetStore().List(), in)
	})
	return p.PerNamespace
}

// eachCached calls count with each target of set, and the prune of each
// recorded resource set no longer names, whose objects are cached as the
// target needs them, with their informer; it returns the resources of
// the others.
func (c *Controller) eachCached(set *rules.Set, count func(*rules.Target, *informer.Informer)) (unknown []schema.GroupVersionResource) {
	toPrune := reconcile.ToPrune(c.opts.Record.Recorded(), set)
	type cachedBy struct {
		ri   *informer.Informer
		res  source.Resource
		keep projection.Projection
	}
	c.mu.RLock()
	informers := map[schema.GroupResource]cachedBy{}
	for gr, r := range c.resources {
		if r.informer != nil {
			informers[gr] = cachedBy{r.informer, r.target.Resource, r.informer.Projection}
		}
	}
	c.mu.RUnlock()
	for _, t := range set.SortedTargets() {
		cb := informers[t.GVR.GroupResource()]
		if cb.ri == nil || cb.ri.GVR != t.GVR || !cb.keep.Covers(t.Reads()) || !cb.ri.ServesAll(t.Reads) {
			unknown = append(unknown, t.GVR)
			continue
		}
		count(t, cb.ri)
	}
	for _, gr := range toPrune {
		if cb, ok := informers[gr]; ok {
			count(reconcile.Prune(cb.res), cb.ri)
		}
	}
	return unknown
}
