package reloader

import (
	"context"
	"errors"
	"strings"

	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// A phase is where the rules file, as last read, stands against the rules
// in force.
type phase int

const (
	// enforced: the file's rules are the rules in force.
	enforced phase = iota
	// held: the file is valid, and the Guard holds its reload.
	held
	// invalid: the file cannot be read or loaded, or its rules conflict.
	invalid
	// waiting: the file is valid but could not be compiled, for the API
	// server could not be asked; it is compiled again at the next look-up.
	waiting
)

func (p phase) String() string {
	return [...]string{"enforced", "held", "invalid", "waiting"}[p]
}

// fileState is the state of the rules file: what was last read, and where
// it stands. Only setState changes it.
type fileState struct {
	phase phase
	// content is the file's content as last read; nil when it could not
	// be read.
	content []byte
	// candidate is, when held or waiting, the file loaded: the one SIGHUP
	// confirms, or the one compiled again at the next look-up.
	candidate *rulefile.File
	// reason is, unless enforced, why the file is not in force.
	reason error
}

// A change is what a load of the file did: the state it leaves the file
// in, and what to count and log about it.
type change struct {
	next  fileState
	cause cause
	// result counts the load in the reloads metric; "" does not count it.
	result string
	// applied is set when the file loaded put different rules in force;
	// confirmed when SIGHUP confirmed the reload held.
	applied, confirmed bool
}

// setState makes ch.next the file's state and, under the same lock, the
// metrics describe it, so that they, Note and the log never disagree.
// It is the only place where the state changes.
func (r *Reloader) setState(ctx context.Context, ch change) {
	r.mu.Lock()
	prev := r.state
	r.state = ch.next
	r.describe()
	if ch.result != "" {
		r.opts.Metrics.RulesReloads.WithLabelValues(ch.result).Inc()
	}
	if ch.next.phase == held {
		r.opts.Metrics.Guard.HeldTotal.Inc() // every change to held is a new reload held
	}
	inForce := len(r.file.Rules)
	r.mu.Unlock()
	r.logChange(ctx, prev, ch, inForce)
}

// describe sets the gauges that describe the state and the rules in
// force. r.mu is held.
func (r *Reloader) describe() {
	m, st := r.opts.Metrics, r.state
	m.Rules.Set(float64(len(r.file.Rules)))
	m.ResourcesUnresolved.Set(float64(len(r.unresolved)))
	m.RulesLastReloadSuccessful.Set(boolGauge(st.phase == enforced || st.phase == held))
	g := m.Guard
	g.Held.Set(boolGauge(st.phase == held))
	g.HeldChanges.Reset()
	if st.phase != held {
		return
	}
	var many *TooManyChanges
	if errors.As(st.reason, &many) {
		for rule, n := range many.PerRule {
			g.HeldChanges.WithLabelValues(rule).Set(float64(n))
		}
	}
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// logChange logs what ch did to the file's state, which was prev; inForce
// is the number of rules in force after it.
func (r *Reloader) logChange(ctx context.Context, prev fileState, ch change, inForce int) {
	logger := klog.FromContext(ctx)
	path, next := r.opts.Path, ch.next
	if prev.phase == held && next.phase != held && !ch.confirmed {
		logger.Info("Held rules reload withdrawn", "path", path)
	}
	switch next.phase {
	case held:
		logger.Error(next.reason, "Rules reload held; the previous rules are still enforced. Send SIGHUP to apply it, or change the file", "path", path)
	case invalid:
		logger.Error(next.reason, "Rules file invalid; the previous rules are still enforced", "path", path, "reason", ch.cause.name)
	case waiting:
		logger.Error(next.reason, "Could not ask the API server; the previous rules are still enforced until it answers", "path", path, "reason", ch.cause.name, "retryIn", r.opts.RetryInterval)
	case enforced:
		switch {
		case ch.applied:
			logger.Info("Rules reloaded", "path", path, "reason", ch.cause.name, "rules", inForce)
		case prev.phase == invalid:
			logger.Info("Rules file valid again; rules unchanged", "path", path)
		}
	}
}

// Note says, in one line, why the rules file is not in force: a reload
// held, a file invalid, or one not compiled yet; "" when it is in force.
func (r *Reloader) Note() string {
	r.mu.Lock()
	st := r.state
	r.mu.Unlock()
	var reason string
	if st.reason != nil {
		reason = strings.ReplaceAll(st.reason.Error(), "\n", "; ")
	}
	switch st.phase {
	case held:
		return "rules reload held: " + reason + "; send SIGHUP to apply it, or change the file"
	case invalid:
		return "rules file invalid, the previous rules are still enforced: " + reason
	case waiting:
		return "rules file not compiled yet, the previous rules are still enforced: " + reason
	}
	return ""
}
