package reloader

import (
	"bytes"
	"context"

	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/tenants"
)

// inForce is a tenant's result in force, and the file its rules come
// from: another than the ConfigMap's while a new file is held.
type inForce struct {
	result tenants.Result
	file   tenants.File
}

// same reports whether f is the file whose rules are in force.
func (f inForce) same(o tenants.File) bool {
	return f.file.UID == o.UID && f.file.Missing == o.Missing && bytes.Equal(f.file.Data, o.Data)
}

// hold holds each tenant's file that is not the one in force, that the
// tenant did not confirm (tenants.ConfirmAnnotation), and that would
// change more objects in its namespace than the tenants section's
// maxChanges: the rules in force before stay in force for that tenant,
// and its status says how to confirm. set and unresolved are those of
// results, composed with the main file's rules, admin and adminUnresolved;
// hold returns those to put in force. A tenant's file is never held when
// there are no rules in force yet to keep (Prepare), when its ConfigMap is
// deleted, or when the objects cannot be counted.
func (r *Reloader) hold(ctx context.Context, c tenants.Compiler, file *rulefile.File, admin *rules.Set, adminUnresolved []rulefile.FieldError,
	results []tenants.Result, set *rules.Set, unresolved []rulefile.FieldError) (*rules.Set, []rulefile.FieldError, []tenants.Result, error) {
	limit := file.Tenants.MaxChanges
	if limit == 0 || r.opts.Changed == nil {
		return set, unresolved, results, nil
	}
	r.mu.Lock()
	current := r.inForce
	r.mu.Unlock()
	before := make([]tenants.Result, len(results))
	var candidates []string
	for i, res := range results {
		prev, ok := current[res.Namespace]
		before[i] = prev.result
		if !ok {
			before[i] = tenants.Result{File: res.File} // no rule
		}
		if ok && prev.same(res.File) || res.Confirmed() {
			before[i] = res
			continue
		}
		candidates = append(candidates, res.Namespace)
	}
	if len(candidates) == 0 {
		return set, unresolved, results, nil
	}
	beforeSet, _, err := c.Compose(file, admin, adminUnresolved, before)
	if err != nil {
		klog.FromContext(ctx).Error(err, "The tenants' rules in force do not compile with the main file's any more; no tenant's new file is held")
		return set, unresolved, results, nil
	}
	changes := r.opts.Changed(beforeSet, set, candidates)
	held := false
	for i, res := range results {
		if n := changes[res.Namespace]; n > limit {
			var prev *tenants.Result
			if p, ok := current[res.Namespace]; ok {
				prev = &p.result
			}
			results[i] = tenants.Hold(prev, res, n, limit)
			held = true
			klog.FromContext(ctx).Info("Tenant's new rules file held: it would change more objects than tenants.maxChanges allows",
				"configMap", klog.KRef(res.Namespace, res.ConfigMap), "objects", n, "maxChanges", limit, "digest", results[i].Held.Digest)
		}
	}
	if !held {
		return set, unresolved, results, nil
	}
	set, unresolved, err = c.Compose(file, admin, adminUnresolved, results)
	return set, unresolved, results, err
}

// putInForce records results as the tenants' results in force.
func (r *Reloader) putInForce(results []tenants.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := make(map[string]inForce, len(results))
	for _, res := range results {
		f := inForce{result: res, file: res.File}
		if res.Held != nil {
			f.file = r.inForce[res.Namespace].file
		}
		next[res.Namespace] = f
	}
	r.inForce = next
}
