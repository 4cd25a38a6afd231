package reloader

import (
	"context"
	"errors"

	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// retried is the cause of compiling again a file that could not be
// compiled earlier because the API server could not be asked.
var retried = cause{name: "retry after the API server could not be asked"}

// resolve resolves the rules in force again, against the cluster as it is
// now, and applies the result if it changed; or, when a file changed while
// the API server could not be asked, compiles that file again.
func (r *Reloader) resolve(ctx context.Context) {
	r.mu.Lock()
	file, pending := r.file, r.pending
	r.mu.Unlock()
	if pending != nil {
		r.retry(ctx, pending)
		return
	}
	err := r.apply(ctx, file, false)
	switch {
	case errors.Is(err, ErrUnreachable):
		klog.FromContext(ctx).Error(err, "Could not ask the API server; the previous rules are still enforced until it answers", "retryIn", r.opts.RetryInterval)
	case err != nil:
		klog.FromContext(ctx).Error(err, "Rules conflict on the resources now served; the previous rules are still enforced")
	}
}

// retry compiles again file, loaded while the API server could not be
// asked, and puts it in force as a reload of a changed file would have:
// guarded, so that a large change is held as it would have been.
func (r *Reloader) retry(ctx context.Context, file *rules.File) {
	var held errHeld
	switch err := r.apply(ctx, file, true); {
	case errors.As(err, &held):
		r.hold(ctx, file, held.error)
		return
	case err != nil:
		r.fail(ctx, retried, err)
		return
	}
	r.release(ctx)
	r.succeed()
	klog.FromContext(ctx).Info("Rules reloaded", "path", r.opts.Path, "reason", retried.name, "rules", len(file.Rules))
}
