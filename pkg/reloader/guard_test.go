package reloader

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

const teamC = "rules:\n- name: team\n  resources: [configmaps]\n  annotations: {team: c}\n"

// holdAll is a Guard that holds every reload, counting its calls.
func holdAll(calls *atomic.Int64) Guard {
	return func(context.Context, *rules.Set) error {
		calls.Add(1)
		return &TooManyChanges{Total: 7, PerRule: map[string]int{"team": 7}, Limit: 5, Setting: "--max-changes"}
	}
}

// A held reload keeps the previous rules in force, says so in metrics and
// Held, and is applied once SIGHUP confirms it with the file unchanged.
func TestGuardHoldsUntilSIGHUP(t *testing.T) {
	var calls atomic.Int64
	h := start(t, teamA, Options{Watch: true, Guard: holdAll(&calls)})
	if calls.Load() != 0 {
		t.Errorf("the rules loaded at start were guarded (%d calls)", calls.Load())
	}
	h.replace(teamB)
	h.waitFor("the reload to be held", func() bool { return h.r.Note() != "" })
	h.noApply(settle)
	if !strings.Contains(h.r.Note(), "would change 7 objects, more than --max-changes 5 (by rule: team: 7)") {
		t.Errorf("Note() = %q", h.r.Note())
	}
	checkSet(t, h.r.Set(), h.compiled(teamA))
	if got := h.exported("rules_reload_held", ""); got != 1 {
		t.Errorf("rules_reload_held = %v, want 1", got)
	}
	if got := h.exported("rules_reloads_held_total", ""); got != 1 {
		t.Errorf("rules_reloads_held_total = %v, want 1", got)
	}
	if got := h.exported("rules_reload_held_changes", ""); got != 7 {
		t.Errorf("rules_reload_held_changes = %v, want 7", got)
	}

	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	checkSet(t, h.waitApply(), h.compiled(teamB))
	h.waitFor("the hold to be released", func() bool { return h.r.Note() == "" })
	if got := h.exported("rules_reload_held", ""); got != 0 {
		t.Errorf("rules_reload_held = %v after confirmation, want 0", got)
	}
	if calls.Load() != 1 {
		t.Errorf("Guard called %d times, want once: a confirmed reload is not guarded", calls.Load())
	}
}

// A held reload is replaced by the next change of the file, which is
// guarded again, and withdrawn when the file goes back to the rules in
// force; resolving resources again is never guarded.
func TestGuardFileChanges(t *testing.T) {
	var calls atomic.Int64
	h := start(t, teamA, Options{Watch: true, Guard: holdAll(&calls)})
	h.replace(teamB)
	h.waitFor("the reload to be held", func() bool { return calls.Load() == 1 })
	h.replace(teamC)
	h.waitFor("the new file to be guarded", func() bool { return calls.Load() == 2 })
	h.noApply(settle)
	if h.r.Note() == "" {
		t.Fatal("the reload of the changed file is not held")
	}
	h.replace(teamA)
	h.waitFor("the hold to be withdrawn", func() bool { return h.r.Note() == "" })
	h.noApply(settle)
	if got := h.exported("rules_reload_held", ""); got != 0 {
		t.Errorf("rules_reload_held = %v, want 0", got)
	}
	h.resolve()
	if calls.Load() != 2 {
		t.Errorf("Guard called %d times, want 2", calls.Load())
	}
}

// A guard that lets a reload through applies it as if there were none.
func TestGuardAllows(t *testing.T) {
	var calls atomic.Int64
	h := start(t, teamA, Options{Watch: true, Guard: func(context.Context, *rules.Set) error { calls.Add(1); return nil }})
	h.replace(teamB)
	checkSet(t, h.waitApply(), h.compiled(teamB))
	if calls.Load() != 1 || h.r.Note() != "" {
		t.Errorf("Guard called %d times, Note() = %q; want 1, \"\"", calls.Load(), h.r.Note())
	}
}

// TooManyChanges names the limit as the user sets it, or says "the limit".
func TestTooManyChangesError(t *testing.T) {
	for _, tc := range []struct{ setting, want string }{
		{"--max-changes", "the new rules would change 7 objects, more than --max-changes 5 (by rule: team: 7)"},
		{"", "the new rules would change 7 objects, more than the limit of 5 (by rule: team: 7)"},
	} {
		err := &TooManyChanges{Total: 7, PerRule: map[string]int{"team": 7}, Limit: 5, Setting: tc.setting}
		if got := err.Error(); got != tc.want {
			t.Errorf("Setting %q: Error() = %q, want %q", tc.setting, got, tc.want)
		}
	}
}
