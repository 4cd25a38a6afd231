package reloader

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
	"github.com/kube-annotator/kube-annotator/pkg/tenants"
)

// Tenants gives the Reloader the tenants' rules files, for a main file
// with a tenants section (a tenantwatch.Watch).
type Tenants interface {
	// Files returns the tenants' files that limits find, or an error when
	// they cannot be listed now.
	Files(ctx context.Context, limits *spec.Tenants) ([]tenants.File, error)
	// Changed receives when Files may return something else.
	Changed() <-chan struct{}
	// Report tells each tenant what of its file is in force.
	Report(ctx context.Context, results []tenants.Result)
	// Stop stops watching the files, for a main file without tenants.
	Stop()
}

// checked is a tenant's file as last checked, with the limits it was
// checked against.
type checked struct {
	file   tenants.File
	limits *spec.Tenants
	result tenants.Result
}

// compile compiles file, the main rules file, as resolve.Compile does
// and, when it lets tenants write rules, with the rules of the tenants'
// files that its limits allow (package tenants) after its own. The
// results say what of each tenant's file is in force.
// With hold, a tenant's new file may be held (see hold).
func (r *Reloader) compile(ctx context.Context, file *rulefile.File, hold bool) (*rules.Set, []rulefile.FieldError, []tenants.Result, error) {
	c := tenants.Compiler{Path: r.opts.Path, Resolve: r.opts.Resolve, Schemas: r.opts.Schema, Exclude: r.opts.Exclude}
	set, unresolved, err := c.Compile(file)
	if err != nil || r.opts.Tenants == nil {
		return set, unresolved, nil, err
	}
	if file.Tenants == nil {
		r.opts.Tenants.Stop()
		return set, unresolved, nil, nil
	}
	files, err := r.opts.Tenants.Files(ctx, file.Tenants)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	results := r.check(ctx, file.Tenants, files)
	composed, composedUnresolved, err := c.Compose(file, set, unresolved, results)
	if err != nil || !hold {
		return composed, composedUnresolved, results, err
	}
	return r.hold(ctx, c, file, set, unresolved, results, composed, composedUnresolved)
}

// check checks each tenant's file against limits, again only when it or
// the limits changed. A file that cannot be read now, read before, keeps
// the rules last read in force, its status saying why: a tenant's typo
// does not take its keys off its objects.
func (r *Reloader) check(ctx context.Context, limits *spec.Tenants, files []tenants.File) []tenants.Result {
	r.mu.Lock()
	prev := r.checked
	r.mu.Unlock()
	next := make(map[string]checked, len(files))
	results := make([]tenants.Result, 0, len(files))
	for _, f := range files {
		p, seen := prev[f.Namespace]
		sameLimits := seen && p.limits.Equal(limits)
		if sameLimits && p.file.ConfigMap == f.ConfigMap && p.file.UID == f.UID && p.file.Missing == f.Missing && bytes.Equal(p.file.Data, f.Data) {
			p.file.Confirm, p.result.Confirm = f.Confirm, f.Confirm
			next[f.Namespace] = p
			results = append(results, p.result)
			continue
		}
		res := tenants.Check(limits, f)
		if res.Unread() && sameLimits && p.result.Err == nil && p.file.ConfigMap == f.ConfigMap {
			klog.FromContext(ctx).Info("Tenant's rules file cannot be read; the rules last read stay in force", "configMap", klog.KRef(f.Namespace, f.ConfigMap), "err", res.Err)
			res = p.result.Kept(res.Err)
		}
		next[f.Namespace] = checked{file: f, limits: limits, result: res}
		results = append(results, res)
	}
	r.mu.Lock()
	r.checked = next
	r.mu.Unlock()
	return results
}

// recompose puts the tenants' files, as they are now, in force with the
// main file in force. Errors are those of resolve.
func (r *Reloader) recompose(ctx context.Context) {
	r.mu.Lock()
	file := r.file
	r.mu.Unlock()
	if file.Tenants == nil {
		return
	}
	if err := r.applyCompiled(ctx, file, false); err != nil {
		klog.FromContext(ctx).Error(err, "Tenants' rules files changed and could not be put in force; the previous rules are still enforced")
	}
}

// Prepare merges the tenants' rules into the rules in force, for a main
// file with a tenants section, before the controller first enforces them:
// so that a restart never takes a tenant's keys off its objects. It tries
// until the tenants' files can be listed or ctx ends.
func (r *Reloader) Prepare(ctx context.Context) error {
	r.mu.Lock()
	file := r.file
	r.mu.Unlock()
	if file.Tenants == nil || r.opts.Tenants == nil {
		return nil
	}
	for {
		set, unresolved, results, err := r.compile(ctx, file, false)
		if err == nil {
			r.mu.Lock()
			r.set, r.unresolved = set, unresolved
			r.describe()
			r.mu.Unlock()
			r.putInForce(results)
			r.pace(file, results)
			r.opts.Tenants.Report(ctx, results)
			return nil
		}
		klog.FromContext(ctx).Error(err, "Tenants' rules files not read yet; nothing is enforced until they are, so that no tenant's key is taken off",
			"retryIn", r.opts.RetryInterval)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(r.opts.RetryInterval):
		}
	}
}

// pace tells Options.Pace the tenants' write rate and the namespaces
// whose tenants have rules in force, as file and results say.
func (r *Reloader) pace(file *rulefile.File, results []tenants.Result) {
	if r.opts.Pace == nil {
		return
	}
	if file.Tenants == nil {
		r.opts.Pace(0, nil)
		return
	}
	var namespaces []string
	for _, res := range results {
		if res.InForce() > 0 {
			namespaces = append(namespaces, res.Namespace)
		}
	}
	r.opts.Pace(file.Tenants.WritesPerSecond, namespaces)
}
