package retry

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// An informer's list and watch that get no answer from the API server are
// sent again until it answers; what it answers, result or error, goes to
// the reflector after one call.
func TestUntilAnswered(t *testing.T) {
	gone := apierrors.NewResourceExpired("too old resource version")
	throttled := apierrors.NewTooManyRequests("busy", 1)
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "frigates"}, "")
	tests := []struct {
		name      string
		errs      []error // what each call returns; nil after the last
		wantCalls int
		wantErr   error
	}{
		{"answered at once", nil, 1, nil},
		{"refused, then answered", []error{refused, refused}, 3, nil},
		{"refused, then expired", []error{refused, gone}, 2, gone},
		{"throttled", []error{throttled}, 1, throttled},
		{"not served", []error{notFound}, 1, notFound},
	}
	retry := wait.Backoff{Duration: time.Millisecond, Factor: 2, Cap: 4 * time.Millisecond, Steps: 100}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var lists, watches int
			next := func(n *int) error {
				*n++
				if *n <= len(tc.errs) {
					return tc.errs[*n-1]
				}
				return nil
			}
			lw := UntilAnswered(&cache.ListWatch{
				ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
					return &metav1.List{}, next(&lists)
				},
				WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
					return watch.NewEmptyWatch(), next(&watches)
				},
			}, "configmaps.v1", retry)
			_, listErr := lw.ListWithContext(t.Context(), metav1.ListOptions{})
			_, watchErr := lw.WatchWithContext(t.Context(), metav1.ListOptions{})
			for _, got := range []struct {
				what  string
				calls int
				err   error
			}{{"list", lists, listErr}, {"watch", watches, watchErr}} {
				if got.calls != tc.wantCalls || !errors.Is(got.err, tc.wantErr) {
					t.Errorf("%s: %d calls, error %v; want %d calls, error %v", got.what, got.calls, got.err, tc.wantCalls, tc.wantErr)
				}
			}
		})
	}
}

// A list that gets no answer returns once its informer stops, with the
// last error.
func TestUntilAnsweredStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	lw := UntilAnswered(&cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			calls++
			if calls == 3 {
				cancel()
			}
			return nil, refused
		},
	}, "configmaps.v1", wait.Backoff{Duration: time.Millisecond, Steps: 100})
	done := make(chan error, 1)
	go func() {
		_, err := lw.ListWithContext(ctx, metav1.ListOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, refused) || calls != 3 {
			t.Errorf("list returned %v after %d calls, want the refusal after 3", err, calls)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("list still retrying 10s after its informer stopped")
	}
}
