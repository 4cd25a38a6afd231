package value

import (
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
)

// Why a computed value is missing, as the metrics and diff count it.
const (
	// ReasonError: the expression failed (a CEL error, or a result that
	// is not a string). An object that carries the key keeps the value it
	// has: it is neither changed nor deleted until the expression yields
	// again; one that does not gets the default, if the rule gives one.
	ReasonError = "error"
	// ReasonInvalid: the value read or computed is not a valid value for
	// the key (for a label: 63 characters at most, of a restricted set).
	ReasonInvalid = "invalid"
	// ReasonSourceMissing: the field, the namespace key or the related
	// object the value is read from is absent. The key is unset (deleted,
	// where the controller set it) unless the rule gives a default.
	ReasonSourceMissing = "source-missing"
)

// Reasons are the reasons a computed value is missing, in the order the
// metrics list them.
var Reasons = []string{ReasonError, ReasonInvalid, ReasonSourceMissing}

// Missing is a computed value that could not be read — its source lacks
// it, holds no valid value, or its expression failed — why, and the
// reason, one of Reasons; Value is the value read, when not valid.
type Missing struct {
	Key, Why, Reason, Value string
	// AdmissionOnly is set when the value is read from the admission
	// request, which only an admission policy knows.
	AdmissionOnly bool
}

// ValidAnnotation bounds a value read from the object: it must fit in
// the API server's limit for all annotations together.
func ValidAnnotation(v string) []string {
	if len(v) > apivalidation.TotalAnnotationSizeLimitB {
		return []string{fmt.Sprintf("%d bytes, more than annotations may hold (%d)", len(v), apivalidation.TotalAnnotationSizeLimitB)}
	}
	return nil
}
