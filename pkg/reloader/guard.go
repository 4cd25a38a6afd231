package reloader

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

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
	// Limit is the most objects a reload may change unconfirmed; Setting
	// names it as the user sets it (the command line's flag), or is "".
	Limit   int
	Setting string
	// Uncounted names resources whose objects could not be counted.
	Uncounted []string
}

func (e *TooManyChanges) Error() string {
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(e.PerRule)) {
		parts = append(parts, fmt.Sprintf("%s: %d", r, e.PerRule[r]))
	}
	limit := fmt.Sprintf("the limit of %d", e.Limit)
	if e.Setting != "" {
		limit = fmt.Sprintf("%s %d", e.Setting, e.Limit)
	}
	s := fmt.Sprintf("the new rules would change %d objects, more than %s (by rule: %s)", e.Total, limit, strings.Join(parts, ", "))
	if len(e.Uncounted) > 0 {
		s += fmt.Sprintf("; objects of %s not counted", strings.Join(e.Uncounted, ", "))
	}
	return s
}

// errHeld wraps a Guard's error: apply held the reload.
type errHeld struct{ error }

func (e errHeld) Unwrap() error { return e.error }
