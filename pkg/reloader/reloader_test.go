package reloader

import (
	"os"
	"reflect"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// None of these tests runs in parallel: SIGHUP reaches every Reloader in
// the process.

const (
	teamA = "rules:\n- name: team\n  resources: [configmaps]\n  annotations: {team: a}\n"
	teamB = "rules:\n- name: team\n  resources: [configmaps]\n  annotations: {team: b}\n"
	// Same rules as teamA, written differently.
	teamAComment = "# owned by the platform team\nrules:\n  - name: team   # the team\n    resources: [configmaps]\n    annotations:\n      team: a\n"
	conflict     = "rules:\n- name: one\n  resources: [configmaps]\n  annotations: {team: a}\n" +
		"- name: two\n  resources: [configmaps]\n  annotations: {team: b}\n"
	// Widgets are not served until a test serves them.
	withWidgets = "rules:\n- name: team\n  resources: [configmaps, widgets]\n  annotations: {team: a}\n"
	badValue    = "rules:\n- name: team\n  resources: [configmaps]\n  annotations: {team: 1}\n"
)

// settle is longer than Run's debounce (100ms), so a reload that was going
// to happen has happened.
const settle = 300 * time.Millisecond

// checkSet fails unless got is want.
func checkSet(t *testing.T, got, want *rules.Set) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("set = %v, want %v", targets(got), targets(want))
	}
}

// inForce returns the file and set in force.
func (h *harness) inForce() (*rulefile.File, *rules.Set) {
	h.r.mu.Lock()
	file := h.r.file
	h.r.mu.Unlock()
	return file, h.r.Set()
}

func TestWatch(t *testing.T) {
	t.Run("rewrite applies once", func(t *testing.T) {
		h := start(t, teamA, Options{Watch: true})
		h.checkMetrics(reloadMetrics{successes: 1, lastSuccessful: 1, rules: 1})
		h.replace(teamB)
		checkSet(t, h.waitApply(), h.compiled(teamB))
		h.noApply(settle)
		h.checkMetrics(reloadMetrics{successes: 2, lastSuccessful: 1, rules: 1})
		// The new file is in force: resolving it again changes nothing.
		h.resolve()
		h.noApply(0)
	})

	t.Run("comments and layout only: no apply", func(t *testing.T) {
		h := start(t, teamA, Options{Watch: true})
		resets := h.resets.Load()
		h.replace(teamAComment)
		h.noApply(settle)
		if n := h.resets.Load(); n != resets {
			t.Errorf("discovery reset %d times for an unchanged file, want 0", n-resets)
		}
		h.checkMetrics(reloadMetrics{successes: 1, lastSuccessful: 1, rules: 1})
	})

	t.Run("invalid file keeps the rules, fixed file applies", func(t *testing.T) {
		h := start(t, teamA, Options{Watch: true})
		_, before := h.inForce()
		h.replace(badValue)
		h.waitMetrics(reloadMetrics{successes: 1, failures: 1, lastSuccessful: 0, rules: 1})
		h.noApply(0)
		if _, s := h.inForce(); s != before {
			t.Errorf("set in force replaced by an invalid file")
		}
		h.replace(teamB)
		checkSet(t, h.waitApply(), h.compiled(teamB))
		h.waitMetrics(reloadMetrics{successes: 2, failures: 1, lastSuccessful: 1, rules: 1})
	})

	t.Run("invalid file fixed back to the rules in force", func(t *testing.T) {
		h := start(t, teamA, Options{Watch: true})
		h.replace(badValue)
		h.waitMetrics(reloadMetrics{successes: 1, failures: 1, lastSuccessful: 0, rules: 1})
		h.replace(teamAComment)
		h.waitMetrics(reloadMetrics{successes: 2, failures: 1, lastSuccessful: 1, rules: 1})
		h.noApply(0)
	})

	t.Run("conflicting rules keep the rules in force", func(t *testing.T) {
		h := start(t, teamA, Options{Watch: true})
		file, before := h.inForce()
		h.replace(conflict)
		h.waitMetrics(reloadMetrics{successes: 1, failures: 1, lastSuccessful: 0, rules: 1})
		h.noApply(0)
		if f, s := h.inForce(); f != file || s != before {
			t.Errorf("file or set in force replaced by a conflicting file")
		}
		// Re-resolving resolves the file in force, not the conflicting one.
		h.resolve()
		h.noApply(0)
		if f, s := h.inForce(); f != file || !reflect.DeepEqual(s, before) {
			t.Errorf("file or set in force changed by re-resolution after a conflict")
		}
	})

	t.Run("reloaded rules keep the excluded namespaces", func(t *testing.T) {
		h := start(t, teamA, Options{Watch: true}, "kube-*")
		h.noApply(0)
		h.replace(teamB)
		s := h.waitApply()
		checkSet(t, s, h.compiled(teamB))
		for ns, want := range map[string]string{"default": "b", "kube-system": ""} {
			obj := &unstructured.Unstructured{}
			obj.SetNamespace(ns)
			obj.SetName("x")
			if got := s.Targets[configMaps.GVR].Evaluate(obj, nil).Desired.Annotations["team"]; got != want {
				t.Errorf("team wanted in namespace %s = %q, want %q", ns, got, want)
			}
		}
	})

	t.Run("watch off: a change alone does nothing", func(t *testing.T) {
		h := start(t, teamA, Options{})
		h.replace(teamB)
		h.noApply(settle)
		h.checkMetrics(reloadMetrics{successes: 1, lastSuccessful: 1, rules: 1})
	})
}

// TestStart checks that Run starts from the file as it is when it starts,
// not as it was when the Reloader was created, and that it does not
// compile again rules it was given compiled, unless they were compiled
// longer ago than they would have been looked up again.
func TestStart(t *testing.T) {
	t.Run("unchanged: not compiled again, nothing applied", func(t *testing.T) {
		h := start(t, teamA, Options{})
		h.noApply(0)
		if n := h.resets.Load(); n != 0 {
			t.Errorf("discovery reset %d times at start, want none: the rules given to New are in force", n)
		}
		exported := reloadMetrics{
			successes:      h.exported("rules_reloads_total", "success"),
			failures:       h.exported("rules_reloads_total", "failure"),
			lastSuccessful: h.exported("rules_last_reload_successful", ""),
			rules:          h.exported("rules", ""),
			unresolved:     h.exported("resources_unresolved", ""),
		}
		if want := (reloadMetrics{successes: 1, lastSuccessful: 1, rules: 1}); exported != want {
			t.Errorf("exported metrics = %+v, want %+v", exported, want)
		}
	})

	t.Run("file changed before Run", func(t *testing.T) {
		h := newHarness(t, teamA, Options{})
		h.replace(teamB)
		h.run()
		checkSet(t, h.waitApply(), h.compiled(teamB))
		h.waitMetrics(reloadMetrics{successes: 1, lastSuccessful: 1, rules: 1})
	})

	t.Run("resource served before Run: looked up when due", func(t *testing.T) {
		h := newHarness(t, withWidgets, Options{RetryInterval: time.Hour})
		h.res.serve("widgets", widgets)
		h.run()
		h.noApply(settle)
		if n := h.resets.Load(); n != 0 {
			t.Errorf("discovery reset %d times at start, want none: the next look-up is an hour away", n)
		}
	})

	t.Run("resource served while Run waited longer than the interval", func(t *testing.T) {
		h := newHarness(t, withWidgets, Options{RetryInterval: time.Hour})
		h.res.serve("widgets", widgets)
		h.r.mu.Lock()
		h.r.lookedUp = time.Now().Add(-2 * time.Hour) // e.g. waiting for leadership
		h.r.mu.Unlock()
		h.run()
		checkSet(t, h.waitApply(), h.compiled(withWidgets))
	})

	t.Run("file invalid before Run", func(t *testing.T) {
		h := newHarness(t, teamA, Options{})
		_, before := h.inForce()
		h.replace(badValue)
		h.run()
		h.waitMetrics(reloadMetrics{successes: 0, failures: 1, lastSuccessful: 0, rules: 1})
		h.noApply(0)
		if _, s := h.inForce(); s != before {
			t.Errorf("set in force replaced by an invalid file")
		}
	})
}

func TestResolution(t *testing.T) {
	t.Run("retried until served", func(t *testing.T) {
		h := start(t, withWidgets, Options{RetryInterval: 50 * time.Millisecond, Interval: time.Minute})
		h.checkMetrics(reloadMetrics{successes: 1, lastSuccessful: 1, rules: 1, unresolved: 1})
		h.waitFor("a few retries", func() bool { return h.resets.Load() >= 3 })
		h.noApply(0)

		h.res.serve("widgets", widgets)
		checkSet(t, h.waitApply(), h.compiled(withWidgets))
		h.waitMetrics(reloadMetrics{successes: 1, lastSuccessful: 1, rules: 1, unresolved: 0})
		// Everything is served: the next look-up is an Interval away.
		resets := h.resets.Load()
		h.noApply(300 * time.Millisecond)
		if n := h.resets.Load(); n != resets {
			t.Errorf("%d look-ups within 300ms of every resource being served, want 0 (Interval is a minute)", n-resets)
		}
	})

	t.Run("not served: logged once, not at every look-up", func(t *testing.T) {
		const notServed = "Resource not served; its rules are not enforced until it is"
		h := start(t, withWidgets, Options{RetryInterval: 20 * time.Millisecond, Interval: time.Hour})
		h.waitFor("a few look-ups", func() bool { return h.resets.Load() >= 3 })
		if n := h.logged(notServed); n != 1 {
			t.Errorf("%q logged %d times after 3 look-ups, want once", notServed, n)
		}
		h.res.serve("widgets", widgets)
		h.waitApply()
		h.res.mu.Lock()
		delete(h.res.served, "widgets") // its CRD deleted
		h.res.mu.Unlock()
		h.trigger.Resolve()
		h.waitApply()
		resets := h.resets.Load()
		h.waitFor("a few more look-ups", func() bool { return h.resets.Load() >= resets+3 })
		if n := h.logged(notServed); n != 2 {
			t.Errorf("%q logged %d times, want twice: at start and once widgets were gone again", notServed, n)
		}
	})

	t.Run("Resolve kicks an immediate look-up", func(t *testing.T) {
		h := start(t, withWidgets, Options{RetryInterval: time.Hour, Interval: time.Hour})
		h.res.serve("widgets", widgets)
		h.noApply(0)
		h.trigger.Resolve()
		checkSet(t, h.waitApply(), h.compiled(withWidgets))
	})

	t.Run("unchanged resolution applies nothing", func(t *testing.T) {
		h := start(t, teamA, Options{RetryInterval: time.Hour, Interval: time.Hour})
		h.resolve()
		h.noApply(0)
	})
}

// TestSIGHUP signals the test process itself. Run's signal.Notify turns
// the signal into a reload instead of the default action, ending the
// process, so the signal is sent only while Run runs.
func TestSIGHUP(t *testing.T) {
	h := start(t, teamA, Options{})
	hup := func() {
		t.Helper()
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}

	h.replace(teamB)
	hup()
	checkSet(t, h.waitApply(), h.compiled(teamB))
	h.waitMetrics(reloadMetrics{successes: 2, lastSuccessful: 1, rules: 1})

	// An unchanged file is loaded and resolved again, but applies nothing.
	resets := h.resets.Load()
	hup()
	h.waitFor("the reload to be recorded", func() bool { return h.reloadMetrics().successes == 3 })
	h.noApply(0)
	if h.resets.Load() == resets {
		t.Errorf("SIGHUP with an unchanged file did not resolve the rules again")
	}
}
