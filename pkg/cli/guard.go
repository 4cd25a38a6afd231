package cli

import (
	"context"
	"fmt"

	"github.com/kube-annotator/kube-annotator/pkg/controller"
	"github.com/kube-annotator/kube-annotator/pkg/reloader"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// checkMaxChanges validates --max-changes.
func checkMaxChanges(n int) error {
	if n < 0 {
		return fmt.Errorf("--max-changes must not be negative, got %d (0 turns the guard off)", n)
	}
	return nil
}

// changeGuard holds a reload of the rules that would change more than max
// objects, as counted in the controller's caches by preview; max 0 holds
// none. Objects of resources the caches do not hold (newly ruled by the
// reload) are not counted: only known counts hold a reload.
func changeGuard(max int, preview func(*rules.Set) controller.Preview) reloader.Guard {
	if max == 0 {
		return func(context.Context, *rules.Set) error { return nil }
	}
	return func(_ context.Context, set *rules.Set) error {
		p := preview(set)
		if p.Total <= max {
			return nil
		}
		err := &reloader.TooManyChanges{Total: p.Total, PerRule: p.PerRule, Limit: max}
		for _, gvr := range p.Unknown {
			err.Uncounted = append(err.Uncounted, rules.GVRString(gvr))
		}
		return err
	}
}

// readyNotes is what /readyz says besides "ok": a reload held.
func (a *app) readyNotes() []string {
	if held := a.reloader.Held(); held != "" {
		return []string{held}
	}
	return nil
}
