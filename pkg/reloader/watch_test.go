package reloader

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2/textlogger"
)

// volume is a directory laid out as the kubelet lays out a ConfigMap
// volume with one key, rules.yaml: "rules.yaml -> ..data/rules.yaml",
// "..data -> ..<timestamp>", the directory that holds the file.
type volume struct {
	t   *testing.T
	dir string
	n   int // updates made
}

// newVolume lays out a volume in a new directory with content as rules.yaml.
func newVolume(t *testing.T, content string) *volume {
	v := &volume{t: t, dir: t.TempDir()}
	v.update(content)
	if err := os.Symlink(filepath.Join("..data", "rules.yaml"), v.path()); err != nil {
		t.Fatal(err)
	}
	return v
}

func (v *volume) path() string { return filepath.Join(v.dir, "rules.yaml") }

// update changes rules.yaml to content as the kubelet does: a new
// timestamped directory, "..data_tmp" pointing at it renamed over
// "..data", the previous timestamped directory removed.
func (v *volume) update(content string) {
	t := v.t
	t.Helper()
	v.n++
	ts := filepath.Join(v.dir, fmt.Sprintf("..2026_01_02_03_04_05.%d", v.n))
	if err := os.Mkdir(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ts, "rules.yaml"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	old, _ := os.Readlink(filepath.Join(v.dir, "..data"))
	tmp := filepath.Join(v.dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(v.dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(v.dir, old)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConcerns checks which names in the rules file's directory concern
// it, in each layout the file may be in.
func TestConcerns(t *testing.T) {
	for _, tc := range []struct {
		name string
		// layout lays out dir and returns the rules file's path.
		layout func(t *testing.T, dir string) string
		// want says, for each name in dir, whether an event on it
		// concerns the file.
		want map[string]bool
	}{{
		name: "plain file",
		layout: func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "rules.yaml"), teamA)
			return filepath.Join(dir, "rules.yaml")
		},
		want: map[string]bool{"rules.yaml": true, "controller.log": false, "rules.yaml.tmp": false, ".rules.yaml.swp": false, "..data": false},
	}, {
		name: "file not there (yet)",
		layout: func(t *testing.T, dir string) string {
			return filepath.Join(dir, "rules.yaml")
		},
		want: map[string]bool{"rules.yaml": true, "controller.log": false},
	}, {
		name: "ConfigMap volume",
		layout: func(t *testing.T, dir string) string {
			v := &volume{t: t, dir: dir}
			v.update(teamA)
			v.update(teamB) // ..data -> ..2026_01_02_03_04_05.2
			if err := os.Symlink(filepath.Join("..data", "rules.yaml"), v.path()); err != nil {
				t.Fatal(err)
			}
			return v.path()
		},
		want: map[string]bool{"rules.yaml": true, "..data": true, "..2026_01_02_03_04_05.2": true,
			"..2026_01_02_03_04_05.1": false, "..2026_01_02_03_04_05.3": false, "..data_tmp": false, "controller.log": false},
	}, {
		name: "link to a file next to it",
		layout: func(t *testing.T, dir string) string {
			writeFile(t, filepath.Join(dir, "rules-v2.yaml"), teamA)
			if err := os.Symlink("rules-v2.yaml", filepath.Join(dir, "rules.yaml")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(dir, "rules.yaml")
		},
		want: map[string]bool{"rules.yaml": true, "rules-v2.yaml": true, "rules-v1.yaml": false},
	}, {
		name: "link out of the directory",
		layout: func(t *testing.T, dir string) string {
			elsewhere := filepath.Join(t.TempDir(), "rules.yaml")
			writeFile(t, elsewhere, teamA)
			if err := os.Symlink(elsewhere, filepath.Join(dir, "rules.yaml")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(dir, "rules.yaml")
		},
		want: map[string]bool{"rules.yaml": true, "controller.log": false},
	}, {
		name: "links in a loop",
		layout: func(t *testing.T, dir string) string {
			for from, to := range map[string]string{"rules.yaml": "a", "a": "rules.yaml"} {
				if err := os.Symlink(to, filepath.Join(dir, from)); err != nil {
					t.Fatal(err)
				}
			}
			return filepath.Join(dir, "rules.yaml")
		},
		want: map[string]bool{"rules.yaml": true, "a": true, "b": false},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.layout(t, dir)
			for name, want := range tc.want {
				if got := concerns(path, filepath.Join(dir, name)); got != want {
					t.Errorf("concerns(%s) = %v, want %v", name, got, want)
				}
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestEventsConcern watches a directory as Run does and checks which of
// the events that each change makes concern the rules file: all events
// of a change are in once that of a sentinel file written after it is.
func TestEventsConcern(t *testing.T) {
	appendLog := func(t *testing.T, path string) {
		f, err := os.OpenFile(filepath.Join(filepath.Dir(path), "controller.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for range 5 {
			if _, err := f.WriteString("E1204 Rules reload held\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		volume bool
		change func(t *testing.T, path string)
		// concern is whether some event of the change concerns the file.
		concern bool
	}{
		{name: "log lines next to the file", change: appendLog},
		{name: "log lines in a ConfigMap volume", volume: true, change: appendLog},
		{name: "another file renamed next to it", change: func(t *testing.T, path string) {
			other := filepath.Join(filepath.Dir(path), "other.yaml")
			writeFile(t, other+".tmp", teamB)
			if err := os.Rename(other+".tmp", other); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "written in place", concern: true, change: func(t *testing.T, path string) { writeFile(t, path, teamB) }},
		{name: "a new file renamed over it", concern: true, change: func(t *testing.T, path string) {
			writeFile(t, path+".tmp", teamB)
			if err := os.Rename(path+".tmp", path); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "moved away, written anew", concern: true, change: func(t *testing.T, path string) {
			if err := os.Rename(path, path+"~"); err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, teamB)
		}},
		{name: "ConfigMap volume update", volume: true, concern: true, change: func(t *testing.T, path string) {
			(&volume{t: t, dir: filepath.Dir(path), n: 1}).update(teamB)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rules.yaml")
			if tc.volume {
				path = newVolume(t, teamA).path()
			} else {
				writeFile(t, path, teamA)
			}
			w, err := fsnotify.NewWatcher()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := w.Add(filepath.Dir(path)); err != nil {
				t.Fatal(err)
			}
			tc.change(t, path)
			sentinel := filepath.Join(filepath.Dir(path), "sentinel")
			writeFile(t, sentinel, "")
			var ours, all []string
			for ev := range w.Events {
				if ev.Name == sentinel {
					break
				}
				all = append(all, ev.String())
				if concerns(path, ev.Name) {
					ours = append(ours, ev.String())
				}
			}
			if got := len(ours) > 0; got != tc.concern {
				t.Errorf("events that concern the file: %q, want some: %v (all events: %q)", ours, tc.concern, all)
			}
		})
	}
}

// countLines counts the lines of the file at path that contain s.
func countLines(t *testing.T, path, s string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), s)
}

// TestLogFileNextToRules runs a Reloader whose log is written next to the
// rules file, as a controller started with its output in the rules
// directory does: logging that a file is held or invalid must not set off
// another reload, nor another line.
func TestLogFileNextToRules(t *testing.T) {
	var calls atomic.Int64
	h := newHarness(t, teamA, Options{Watch: true, Guard: holdAll(&calls)})
	logPath := filepath.Join(filepath.Dir(h.path), "controller.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	h.runWith(textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(logFile))))
	h.waitFor("Run's initial load", func() bool { return h.reloadMetrics().successes == 1 })

	h.replace(teamB)
	h.waitFor("the reload to be held", func() bool { return calls.Load() == 1 })
	h.noApply(settle)
	h.replace(badValue)
	h.waitMetrics(reloadMetrics{successes: 1, failures: 1, lastSuccessful: 0, rules: 1})
	h.noApply(settle)
	for msg, want := range map[string]int{logHeld: 1, logWithdrawn: 1, fileInvalid: 1} {
		if n := countLines(t, logPath, msg); n != want {
			t.Errorf("%q logged %d times, want %d", msg, n, want)
		}
	}
	h.checkMetrics(reloadMetrics{successes: 1, failures: 1, lastSuccessful: 0, rules: 1})
	if n := calls.Load(); n != 1 {
		t.Errorf("Guard called %d times, want once", n)
	}
	if got := h.exported("rules_reload_held", ""); got != 0 {
		t.Errorf("rules_reload_held = %v with the file invalid, want 0", got)
	}
}

// TestWatchConfigMapVolume checks that an update of a ConfigMap volume
// reloads the rules file once, and that other files written into the
// volume's directory do not reload it.
func TestWatchConfigMapVolume(t *testing.T) {
	v := newVolume(t, teamA)
	h := newFakes(t, v.path())
	h.build(Options{Watch: true})
	h.run()
	h.waitFor("Run's initial load", func() bool { return h.reloadMetrics().successes == 1 })

	v.update(teamB)
	checkSet(t, h.waitApply(), h.compiled(teamB))
	h.noApply(settle)
	h.checkMetrics(reloadMetrics{successes: 2, lastSuccessful: 1, rules: 1})
	if n := h.logged(logReloaded); n != 1 {
		t.Errorf("%q logged %d times for one update, want once", logReloaded, n)
	}
	resets := h.resets.Load()
	for i := range 20 {
		writeFile(t, filepath.Join(v.dir, "controller.log"), strings.Repeat("line\n", i))
	}
	h.noApply(settle)
	if n := h.resets.Load(); n != resets {
		t.Errorf("writes to another file in the volume compiled the rules %d times, want none", n-resets)
	}
	h.checkMetrics(reloadMetrics{successes: 2, lastSuccessful: 1, rules: 1})
}
