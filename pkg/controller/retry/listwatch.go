package retry

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// InformerBackoff is how an informer's list or watch that got no answer from
// the API server is tried again: 250 ms (the probe interval of writes)
// doubling up to 2 s, for as long as the server does not answer.
var InformerBackoff = wait.Backoff{Duration: probeInterval, Factor: 2, Cap: 2 * time.Second, Steps: int(^uint(0) >> 1)}

// UntilAnswered returns what lw's list and watch return once the API server
// answers them, with a result or an error of its own. A request that got
// no answer (the server is down or cannot be reached) is sent again after
// a pause that follows retry, until ctx ends, instead of being returned to
// client-go's reflector: the reflector counts every failed list or watch
// in one exponential backoff (0.8 s doubling to 30 s, with up to as much
// again in jitter) that it resets only once two minutes have passed, so
// that after a few short outages an informer would wait up to a minute
// after the server is back before it watches again, with a stale cache.
// Errors the server answers with (expired resource versions, 429, NotFound,
// Forbidden) still reach the reflector and its watch error handler. Each
// retry is logged at V(4), naming resource.
func UntilAnswered(lw *cache.ListWatch, resource string, retry wait.Backoff) *cache.ListWatch {
	list, watchFunc := lw.ListWithContextFunc, lw.WatchFuncWithContext
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return retryUnanswered(ctx, retry, "List", resource, func(ctx context.Context) (runtime.Object, error) { return list(ctx, o) })
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return retryUnanswered(ctx, retry, "Watch", resource, func(ctx context.Context) (watch.Interface, error) { return watchFunc(ctx, o) })
		},
	}
}

// retryUnanswered calls call, the verb (List or Watch) of resource, until
// it returns something other than a failure without an answer from the
// API server, or ctx ends; it pauses between calls as retry says.
func retryUnanswered[T any](ctx context.Context, retry wait.Backoff, verb, resource string, call func(context.Context) (T, error)) (T, error) {
	for {
		v, err := call(ctx)
		if err == nil || ctx.Err() != nil || !Unreachable(err) {
			return v, err
		}
		d := retry.Step()
		klog.FromContext(ctx).V(4).Info(verb+" got no answer; retrying", "resource", resource, "retryIn", d, "err", err)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
	}
}
