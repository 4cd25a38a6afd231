package metrics

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons of kube_annotator_record_write_errors_total.
const (
	// RecordForbidden: RBAC denies creating or updating the record.
	RecordForbidden = "Forbidden"
	// RecordNotFound: the record's namespace does not exist.
	RecordNotFound = "NotFound"
	// RecordConflict: other writers kept changing the record.
	RecordConflict = "Conflict"
	// RecordInvalid: the API server refused the record as invalid.
	RecordInvalid = "Invalid"
	// RecordOther: no answer, another reason, or a ConfigMap that is not a
	// usable record (the log says which).
	RecordOther = "Other"
)

// RecordErrorReasons are the reasons of
// kube_annotator_record_write_errors_total; each series exists from the
// start.
var RecordErrorReasons = []string{RecordForbidden, RecordNotFound, RecordConflict, RecordInvalid, RecordOther}

// RecordMetrics describe the writes to the record, which must succeed
// before the controller writes to a resource it has not recorded.
type RecordMetrics struct {
	// WriteErrors counts failed attempts to change the record, by reason
	// (one of RecordErrorReasons).
	WriteErrors *prometheus.CounterVec
	// WriteFailing is 1 while the last attempt to change the record
	// failed: the resource it was for is not written to.
	WriteFailing prometheus.Gauge
}

func newRecordMetrics() RecordMetrics {
	r := RecordMetrics{
		WriteErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "record_write_errors_total",
			Help: "Failed attempts to change the record of the resources written to (no object of such a resource is changed), " +
				"by reason: Forbidden, NotFound (its namespace), Conflict, Invalid or Other.",
		}, []string{"reason"}),
		WriteFailing: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "record_write_failing",
			Help: "1 while the last attempt to change the record failed: the controller cannot write to a resource it has not recorded, and /readyz fails.",
		}),
	}
	for _, reason := range RecordErrorReasons {
		r.WriteErrors.WithLabelValues(reason)
	}
	return r
}

func (r RecordMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.WriteErrors, r.WriteFailing}
}

// Observe counts the outcome of an attempt to change the record: err is
// nil when it succeeded.
func (r RecordMetrics) Observe(err error) {
	if err == nil {
		r.WriteFailing.Set(0)
		return
	}
	r.WriteFailing.Set(1)
	r.WriteErrors.WithLabelValues(RecordErrorReason(err)).Inc()
}

// RecordErrorReason returns the reason, one of RecordErrorReasons, of err,
// an error changing the record.
func RecordErrorReason(err error) string {
	switch apierrors.ReasonForError(err) {
	case metav1.StatusReasonForbidden:
		return RecordForbidden
	case metav1.StatusReasonNotFound:
		return RecordNotFound
	case metav1.StatusReasonConflict, metav1.StatusReasonAlreadyExists:
		return RecordConflict
	case metav1.StatusReasonInvalid, metav1.StatusReasonBadRequest:
		return RecordInvalid
	}
	return RecordOther
}
