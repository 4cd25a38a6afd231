package reloader

import (
	"testing"
	"time"
)

const (
	couldNotAsk = "Could not ask the API server; the previous rules are still enforced until it answers"
	fileInvalid = "Rules file invalid; the previous rules are still enforced"
)

// An API server that cannot be asked which resources it serves changes
// nothing in force: neither a reload nor a look-up applies a set without
// the resources it could not resolve. A file changed meanwhile is put in
// force once the server answers.
func TestUnreachable(t *testing.T) {
	t.Run("file changed while down: applied once up", func(t *testing.T) {
		h := start(t, teamA, Options{Watch: true, RetryInterval: 50 * time.Millisecond, Interval: time.Hour})
		_, before := h.inForce()
		h.res.setDown(true)
		h.replace(teamB)
		h.waitFor("the reload", func() bool { return h.logged(couldNotAsk) >= 1 })
		h.noApply(settle)
		if _, s := h.inForce(); s != before {
			t.Errorf("set in force replaced while the API server could not be asked")
		}
		if n := h.logged(fileInvalid); n != 0 {
			t.Errorf("%q logged %d times, want none: the file is valid", fileInvalid, n)
		}
		h.waitFor("retries", func() bool { return h.logged(couldNotAsk) >= 3 })
		// Retries go on while the counts are read, and each is counted just
		// before it is logged: the count lies between the retries logged
		// before the reading and one more than those logged after it.
		loggedBefore := h.logged(couldNotAsk)
		got := h.reloadMetrics()
		loggedAfter := h.logged(couldNotAsk)
		if got.failures < float64(loggedBefore) || got.failures > float64(loggedAfter+1) {
			t.Errorf("failures counted = %v, want one per retry logged (%d to %d)", got.failures, loggedBefore, loggedAfter)
		}
		if got.successes != 1 || got.lastSuccessful != 0 || got.rules != 1 || got.unresolved != 0 {
			t.Errorf("metrics = %+v, want one success, none since, one rule", got)
		}

		h.res.setDown(false)
		checkSet(t, h.waitApply(), h.compiled(teamB))
		h.noApply(settle)
		if n := h.logged("Rules reloaded"); n != 1 {
			t.Errorf("Rules reloaded logged %d times, want once", n)
		}
	})

	t.Run("file changed back while down: nothing applied", func(t *testing.T) {
		h := start(t, teamA, Options{Watch: true, RetryInterval: 50 * time.Millisecond, Interval: time.Hour})
		h.res.setDown(true)
		h.replace(teamB)
		h.waitFor("the reload", func() bool { return h.logged(couldNotAsk) >= 1 })
		h.replace(teamAComment) // the rules in force, written differently
		h.noApply(settle)
		h.upAndLookedUp()
		h.noApply(settle)
		if f, _ := h.inForce(); len(f.Rules) != 1 || f.Rules[0].Annotations.Values["team"] != "a" {
			t.Errorf("file in force %+v, want teamA's", f.Rules)
		}
	})

	t.Run("look-up while down: retried soon, nothing applied", func(t *testing.T) {
		h := start(t, withWidgets, Options{RetryInterval: 50 * time.Millisecond, Interval: time.Hour})
		_, before := h.inForce()
		h.res.setDown(true)
		h.trigger.Resolve()
		h.waitFor("retries", func() bool { return h.logged(couldNotAsk) >= 3 })
		h.noApply(0)
		if _, s := h.inForce(); s != before {
			t.Errorf("set in force replaced while the API server could not be asked")
		}
		h.waitMetrics(reloadMetrics{successes: 1, lastSuccessful: 1, rules: 1, unresolved: 1})
		h.res.serve("widgets", widgets)
		h.res.setDown(false)
		checkSet(t, h.waitApply(), h.compiled(withWidgets))
	})

	t.Run("all served, look-up while down: retried at RetryInterval, not Interval", func(t *testing.T) {
		h := start(t, teamA, Options{RetryInterval: 50 * time.Millisecond, Interval: time.Hour})
		h.res.setDown(true)
		h.trigger.Resolve()
		h.waitFor("retries", func() bool { return h.logged(couldNotAsk) >= 3 })
		h.upAndLookedUp()
		h.noApply(settle)
	})
}

// upAndLookedUp makes the fake cluster reachable again and returns once
// it has answered a look-up. A look-up that comes before the counts are
// read is counted too: while down, the cluster answers none.
func (h *harness) upAndLookedUp() {
	h.t.Helper()
	answered := h.res.answered.Load()
	h.res.setDown(false)
	h.waitFor("a look-up once up", func() bool { return h.res.answered.Load() > answered })
}
