package reloader

import (
	"context"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

const (
	logHeld      = "Rules reload held; the previous rules are still enforced. Send SIGHUP to apply it, or change the file"
	logWithdrawn = "Held rules reload withdrawn"
	logReloaded  = "Rules reloaded"
	logValid     = "Rules file valid again; rules unchanged"
)

// A step is one thing that happens to a Reloader, done synchronously: Run
// would do the same on a file event, a signal or a look-up.
type step func(h *harness, ctx context.Context)

// write replaces the rules file with content and reloads it, as an event
// on it does.
func write(content string) step {
	return func(h *harness, ctx context.Context) {
		h.replace(content)
		h.r.reload(ctx, fileChanged)
	}
}

func sighup(h *harness, ctx context.Context) { h.r.reload(ctx, hangUp) }
func lookUp(h *harness, ctx context.Context) { h.r.resolve(ctx) }
func down(h *harness, _ context.Context)     { h.res.setDown(true) }
func up(h *harness, _ context.Context)       { h.res.setDown(false) }

// stateWant is what a Reloader should say after some steps.
type stateWant struct {
	phase phase
	// note is a part of Note(); "" wants Note() to be "".
	note string
	// inForce is the content whose rules should be in force.
	inForce string
	// The metrics.
	held, heldTotal, lastSuccessful, successes, failures float64
	// logs counts log entries by message; those not named are not checked.
	logs map[string]int
}

// TestStateTransitions checks that the file's state, the metrics, Note and
// the log agree after each sequence of reloads. A Guard holds the rules of
// teamB only.
func TestStateTransitions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
		want  stateWant
	}{{
		name:  "held, then invalid",
		steps: []step{write(teamB), write(badValue)},
		want: stateWant{phase: invalid, note: "rules file invalid, the previous rules are still enforced: ", inForce: teamA,
			heldTotal: 1, failures: 1, logs: map[string]int{logHeld: 1, logWithdrawn: 1, fileInvalid: 1}},
	}, {
		name:  "held, then a file small enough",
		steps: []step{write(teamB), write(teamC)},
		want: stateWant{phase: enforced, inForce: teamC, heldTotal: 1, lastSuccessful: 1, successes: 1,
			logs: map[string]int{logHeld: 1, logWithdrawn: 1, logReloaded: 1}},
	}, {
		name:  "invalid, then held",
		steps: []step{write(badValue), write(teamB)},
		want: stateWant{phase: held, note: "rules reload held: ", inForce: teamA, held: 1, heldTotal: 1, lastSuccessful: 1, failures: 1,
			logs: map[string]int{fileInvalid: 1, logHeld: 1, logWithdrawn: 0}},
	}, {
		name:  "held, then confirmed by SIGHUP",
		steps: []step{write(teamB), sighup},
		want: stateWant{phase: enforced, inForce: teamB, heldTotal: 1, lastSuccessful: 1, successes: 1,
			logs: map[string]int{logHeld: 1, logWithdrawn: 0, logReloaded: 1}},
	}, {
		name:  "held, then the rules in force again",
		steps: []step{write(teamB), write(teamAComment)},
		want: stateWant{phase: enforced, inForce: teamA, heldTotal: 1, lastSuccessful: 1,
			logs: map[string]int{logWithdrawn: 1, logReloaded: 0}},
	}, {
		name:  "held, the same content again: nothing",
		steps: []step{write(teamB), write(teamB), write(teamB)},
		want: stateWant{phase: held, note: "would change 7 objects", inForce: teamA, held: 1, heldTotal: 1, lastSuccessful: 1,
			logs: map[string]int{logHeld: 1}},
	}, {
		name:  "invalid, the same content again: nothing",
		steps: []step{write(badValue), write(badValue), write(badValue)},
		want: stateWant{phase: invalid, note: "annotations.team", inForce: teamA, failures: 1,
			logs: map[string]int{fileInvalid: 1}},
	}, {
		name:  "enforced, the same content again: nothing",
		steps: []step{write(teamC), write(teamC)},
		want: stateWant{phase: enforced, inForce: teamC, lastSuccessful: 1, successes: 1,
			logs: map[string]int{logReloaded: 1}},
	}, {
		name:  "invalid, then fixed back to the rules in force",
		steps: []step{write(badValue), write(teamAComment)},
		want: stateWant{phase: enforced, inForce: teamA, lastSuccessful: 1, successes: 1, failures: 1,
			logs: map[string]int{logValid: 1}},
	}, {
		name:  "could not ask",
		steps: []step{down, write(teamC), lookUp},
		want: stateWant{phase: waiting, note: "rules file not compiled yet", inForce: teamA, failures: 2,
			logs: map[string]int{couldNotAsk: 2}},
	}, {
		name:  "could not ask, then answered",
		steps: []step{down, write(teamC), up, lookUp},
		want: stateWant{phase: enforced, inForce: teamC, lastSuccessful: 1, successes: 1, failures: 1,
			logs: map[string]int{couldNotAsk: 1, logReloaded: 1}},
	}, {
		name:  "could not ask, then held once answered",
		steps: []step{down, write(teamB), up, lookUp},
		want:  stateWant{phase: held, note: "rules reload held: ", inForce: teamA, held: 1, heldTotal: 1, lastSuccessful: 1, failures: 1},
	}, {
		name:  "held, then could not ask",
		steps: []step{write(teamB), down, write(teamC)},
		want: stateWant{phase: waiting, note: "rules file not compiled yet", inForce: teamA, heldTotal: 1, failures: 1,
			logs: map[string]int{logWithdrawn: 1, couldNotAsk: 1}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var big atomic.Pointer[rules.Set]
			h := newHarness(t, teamA, Options{Guard: func(_ context.Context, s *rules.Set) error {
				if reflect.DeepEqual(s, big.Load()) {
					return &TooManyChanges{Total: 7, PerRule: map[string]int{"team": 7}, Limit: 5}
				}
				return nil
			}})
			big.Store(h.compiled(teamB))
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
			h.logs = logger.GetSink().(ktesting.Underlier).GetBuffer()
			ctx := context.WithValue(klog.NewContext(t.Context(), logger), runKey{}, h)
			for _, s := range tc.steps {
				s(h, ctx)
			}
			h.checkState(tc.want)
		})
	}
}

// checkState compares the Reloader's state, Note, rules in force, metrics
// and log with want.
func (h *harness) checkState(want stateWant) {
	t := h.t
	t.Helper()
	h.res.setDown(false) // to compile want.inForce
	h.r.mu.Lock()
	st := h.r.state
	h.r.mu.Unlock()
	if st.phase != want.phase {
		t.Errorf("phase = %v, want %v", st.phase, want.phase)
	}
	if note := h.r.Note(); want.note == "" && note != "" || !strings.Contains(note, want.note) {
		t.Errorf("Note() = %q, want it to contain %q", note, want.note)
	}
	checkSet(t, h.r.Set(), h.compiled(want.inForce))
	got := stateWant{phase: want.phase, note: want.note, inForce: want.inForce, logs: want.logs,
		held:           h.exported("rules_reload_held", ""),
		heldTotal:      h.exported("rules_reloads_held_total", ""),
		lastSuccessful: h.exported("rules_last_reload_successful", ""),
		successes:      h.exported("rules_reloads_total", "success"),
		failures:       h.exported("rules_reloads_total", "failure"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("metrics = %+v,\nwant      %+v", got, want)
	}
	for msg, n := range want.logs {
		if got := h.logged(msg); got != n {
			t.Errorf("%q logged %d times, want %d", msg, got, n)
		}
	}
}
