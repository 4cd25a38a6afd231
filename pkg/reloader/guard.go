package reloader

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// Guard decides whether a reload of the rules file may put set in force;
// an error holds it, and says why. A reload held keeps the previous rules
// in force until the file changes again, or until SIGHUP is sent with the
// file unchanged: that confirms it, and it is applied unguarded. The rules
// loaded at start, and resources resolved again, are never guarded.
type Guard func(ctx context.Context, set *rules.Set) error

// TooManyChanges is the error of a Guard that holds a reload because it
// would change more objects than Limit.
type TooManyChanges struct {
	// Total is the number of objects the reload would change; PerRule, by
	// rule.
	Total   int
	PerRule map[string]int
	// Limit is the most objects a reload may change unconfirmed.
	Limit int
	// Uncounted names resources whose objects could not be counted.
	Uncounted []string
}

func (e *TooManyChanges) Error() string {
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(e.PerRule)) {
		parts = append(parts, fmt.Sprintf("%s: %d", r, e.PerRule[r]))
	}
	s := fmt.Sprintf("the new rules would change %d objects, more than --max-changes %d (by rule: %s)", e.Total, e.Limit, strings.Join(parts, ", "))
	if len(e.Uncounted) > 0 {
		s += fmt.Sprintf("; objects of %s not counted", strings.Join(e.Uncounted, ", "))
	}
	return s
}

// heldReload is a reload held by the Guard.
type heldReload struct {
	file   *rules.File
	reason error
}

// Held returns why a reload of the rules file is held, or "" when none is.
func (r *Reloader) Held() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held == nil {
		return ""
	}
	return "rules reload held: " + r.held.reason.Error() + "; send SIGHUP to apply it, or change the file"
}

// confirms reports whether loading file for cause c confirms the reload
// held: SIGHUP with the held file unchanged.
func (r *Reloader) confirms(file *rules.File, c cause) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return c == hangUp && r.held != nil && file.Equal(r.held.file)
}

// hold records that the reload of file is held for reason, and says so.
func (r *Reloader) hold(ctx context.Context, file *rules.File, reason error) {
	r.mu.Lock()
	r.held = &heldReload{file: file, reason: reason}
	r.mu.Unlock()
	g := r.opts.Metrics.Guard
	g.Held.Set(1)
	g.HeldTotal.Inc()
	g.HeldChanges.Reset()
	var many *TooManyChanges
	if errors.As(reason, &many) {
		for rule, n := range many.PerRule {
			g.HeldChanges.WithLabelValues(rule).Set(float64(n))
		}
	}
	klog.FromContext(ctx).Error(reason, "Rules reload held; the previous rules are still enforced. Send SIGHUP to apply it, or change the file",
		"path", r.opts.Path)
}

// release forgets a held reload: another was applied, or the file went
// back to the rules in force.
func (r *Reloader) release(ctx context.Context) {
	r.mu.Lock()
	was := r.held
	r.held = nil
	r.mu.Unlock()
	if was == nil {
		return
	}
	r.opts.Metrics.Guard.Held.Set(0)
	r.opts.Metrics.Guard.HeldChanges.Reset()
	klog.FromContext(ctx).Info("Held rules reload withdrawn", "path", r.opts.Path)
}

// errHeld wraps a Guard's error: apply held the reload.
type errHeld struct{ error }

func (e errHeld) Unwrap() error { return e.error }
