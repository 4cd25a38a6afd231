package metrics

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestRecordErrorReason(t *testing.T) {
	cm := schema.GroupResource{Resource: "configmaps"}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"forbidden, wrapped", fmt.Errorf("record ns/m-resources: %w", apierrors.NewForbidden(cm, "m-resources", errors.New("no"))), RecordForbidden},
		{"namespace not found", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "ns"), RecordNotFound},
		{"conflict", apierrors.NewConflict(cm, "m-resources", errors.New("changed")), RecordConflict},
		{"already exists", apierrors.NewAlreadyExists(cm, "m-resources"), RecordConflict},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "m-resources", nil), RecordInvalid},
		{"no answer", errors.New("dial tcp: connection refused"), RecordOther},
		{"another reason", apierrors.NewInternalError(errors.New("etcd")), RecordOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RecordErrorReason(tc.err)
			if got != tc.want {
				t.Errorf("RecordErrorReason(%v) = %q, want %q", tc.err, got, tc.want)
			}
			if !slices.Contains(RecordErrorReasons, got) {
				t.Errorf("reason %q is not one of RecordErrorReasons %v", got, RecordErrorReasons)
			}
		})
	}
}

// gathered returns the values of the series of name in m's registry, by
// their reason label ("" when they have none).
func gathered(t *testing.T, m *Metrics, name string) map[string]float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			reason := ""
			for _, l := range s.GetLabel() {
				if l.GetName() == "reason" {
					reason = l.GetValue()
				}
			}
			out[reason] = value(s)
		}
	}
	return out
}

func value(s *dto.Metric) float64 {
	if s.GetCounter() != nil {
		return s.GetCounter().GetValue()
	}
	return s.GetGauge().GetValue()
}

// Every reason's series exists at zero from the start; the gauge follows
// the last outcome.
func TestRecordObserve(t *testing.T) {
	m := New()
	const errorsName, failingName = "kube_annotator_record_write_errors_total", "kube_annotator_record_write_failing"
	start := gathered(t, m, errorsName)
	for _, reason := range RecordErrorReasons {
		if v, ok := start[reason]; !ok || v != 0 {
			t.Errorf("%s{reason=%q} at start = %v (exists: %v), want 0", errorsName, reason, v, ok)
		}
	}
	m.Record.Observe(apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x", nil))
	if got := gathered(t, m, failingName)[""]; got != 1 {
		t.Errorf("%s after an error = %v, want 1", failingName, got)
	}
	if got := gathered(t, m, errorsName); got[RecordForbidden] != 1 || got[RecordOther] != 0 {
		t.Errorf("%s after a Forbidden error = %v, want Forbidden 1 and the others 0", errorsName, got)
	}
	m.Record.Observe(nil)
	if got := gathered(t, m, failingName)[""]; got != 0 {
		t.Errorf("%s after a success = %v, want 0", failingName, got)
	}
}
