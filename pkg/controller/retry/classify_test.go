package retry

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestPermanent(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "a",
		field.ErrorList{field.Invalid(field.NewPath("metadata", "annotations"), "x", "bad")})
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"Invalid", invalid, true},
		{"BadRequest", apierrors.NewBadRequest("bad"), true},
		{"MethodNotSupported", apierrors.NewMethodNotSupported(gr, "patch"), true},
		{"RequestEntityTooLarge", apierrors.NewRequestEntityTooLargeError("too large"), true},
		{"wrapped Invalid", fmt.Errorf("patch configmaps.v1 ns/a: %w", invalid), true},
		{"Conflict", apierrors.NewConflict(gr, "a", errors.New("changed")), false},
		{"ServerTimeout", apierrors.NewServerTimeout(gr, "patch", 1), false},
		{"Timeout", apierrors.NewTimeoutError("slow", 1), false},
		{"TooManyRequests", apierrors.NewTooManyRequests("slow down", 1), false},
		{"Forbidden", apierrors.NewForbidden(gr, "a", errors.New("no")), false},
		{"InternalError", apierrors.NewInternalError(errors.New("boom")), false},
		{"ServiceUnavailable", apierrors.NewServiceUnavailable("later"), false},
		{"NotFound", apierrors.NewNotFound(gr, "a"), false},
		{"plain error", errors.New("connection refused"), false},
		{"nil", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Permanent(tc.err); got != tc.want {
				t.Errorf("Permanent(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestReason(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	tests := []struct {
		err  error
		want string
	}{
		{apierrors.NewForbidden(gr, "", errors.New("rbac")), "Forbidden"},
		{apierrors.NewNotFound(gr, ""), "NotFound"},
		{apierrors.NewResourceExpired("too old"), "Expired"},
		{errors.New("connection refused"), "Unknown"},
	}
	for _, tc := range tests {
		if got := Reason(tc.err); got != tc.want {
			t.Errorf("Reason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
