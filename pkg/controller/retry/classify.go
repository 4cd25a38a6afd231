package retry

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Permanent reports errors that retrying cannot fix: the request itself
// is rejected. The object or the rules must change first, and either
// enqueues the object again.
func Permanent(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) ||
		apierrors.IsMethodNotSupported(err) || apierrors.IsRequestEntityTooLargeError(err)
}

// Reason is the API server's reason for err, e.g. Forbidden, or
// Unknown when err carries none (the server did not answer).
func Reason(err error) string {
	if reason := apierrors.ReasonForError(err); reason != metav1.StatusReasonUnknown {
		return string(reason)
	}
	return "Unknown"
}
