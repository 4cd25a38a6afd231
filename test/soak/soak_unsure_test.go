package soak

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// unsureOp is a create or a delete of the soak whose request failed
// without saying whether the API server applied it: the context ended
// while the server was still at it (the end of the faults cuts the churn's
// requests short), or the server answered that it timed out. Until
// resolve looks, the model counts neither outcome.
type unsureOp struct {
	// create is true for a create, false for a delete.
	create bool
	// st is the object's state: the new one for a create, the one it had
	// before a delete.
	st *soakState
	// converged is whether a deleted object carried what the rules want
	// when it was deleted (for a delete).
	converged bool
}

// outcomeUnknown reports whether a request that returned err may still
// have been applied: an error that is not the API server's answer (the
// context ended, the connection broke) or a 5xx answer such as a timeout.
// A 4xx answer means the server did not apply it.
func outcomeUnknown(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true
	}
	return status.Status().Code >= 500
}

// markUnsure records that op on ref may or may not have been applied.
func (m *soakModel) markUnsure(ref soakRef, op unsureOp) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unsureOps[ref] = op
}

// resolve settles every unsure create and delete by asking the API server
// whether the object exists, and counts it as the request's outcome: a
// created object is live and, if selected, needed a write; a deleted one
// that did not carry what the rules want gives back its write. It runs
// once the faults are over and the controller settled, when no request of
// the soak is in flight any more. It returns how many creates and deletes
// turned out applied, of how many unsure.
func (m *soakModel) resolve(ctx context.Context, e *h.Env) (applied, unsure int, err error) {
	m.mu.Lock()
	ops := m.unsureOps
	m.unsureOps = map[soakRef]unsureOp{}
	m.mu.Unlock()
	for ref, op := range ops {
		obj, err := e.Dynamic.Resource(ref.gvr).Namespace(ref.namespace).Get(ctx, ref.name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return applied, len(ops), fmt.Errorf("resolve %s: %w", ref.key(), err)
		}
		exists := err == nil
		if exists == op.create {
			applied++
		}
		m.mu.Lock()
		switch {
		case op.create && exists:
			op.st.rv = obj.GetResourceVersion()
			m.live[ref] = op.st
			m.created.Add(1)
			if op.st.selected {
				m.needed.Add(1)
			}
		case !op.create && exists:
			m.live[ref] = op.st
			delete(m.removedAt, ref.key())
			m.deleted.Add(-1)
		case !op.create && !op.converged:
			m.needed.Add(-1)
		}
		m.mu.Unlock()
	}
	return applied, len(ops), nil
}

// TestSoakOutcomeUnknown: which failed requests the soak must resolve by
// asking the API server afterwards.
func TestSoakOutcomeUnknown(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"context ended", fmt.Errorf("create: %w", context.DeadlineExceeded), true},
		{"connection reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{"server timeout", apierrors.NewTimeoutError("still processing", 1), true},
		{"internal error", apierrors.NewInternalError(errors.New("etcd")), true},
		{"throttled", apierrors.NewTooManyRequests("busy", 1), false},
		{"already exists", apierrors.NewAlreadyExists(gr, "a"), false},
		{"not found", fmt.Errorf("create: %w", apierrors.NewNotFound(gr, "a")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcomeUnknown(tc.err); got != tc.want {
				t.Errorf("outcomeUnknown(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
