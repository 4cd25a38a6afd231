package reloader

import (
	"context"
	"errors"

	"k8s.io/klog/v2"
)

// resolve resolves the rules in force again, against the cluster as it is
// now, and applies the result if it changed; or, when the file could not
// be compiled because the API server could not be asked, compiles that
// file again.
func (r *Reloader) resolve(ctx context.Context) {
	r.mu.Lock()
	file, st := r.file, r.state
	r.mu.Unlock()
	if st.phase == waiting {
		r.setState(ctx, r.load(ctx, st.candidate, st.content, retried, st))
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
