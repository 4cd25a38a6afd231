package progress

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"
)

// started is when the benchmark started; progress lines show the time since.
var started = time.Now()

// Elapsed is the time since the benchmark started, rounded for humans.
func Elapsed() time.Duration { return Since(started) }

// Logf prints a progress line on stderr.
func Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[bench %7s] "+format+"\n", append([]any{Elapsed()}, args...)...)
}

// Since is the time since t, rounded for humans.
func Since(t time.Time) time.Duration {
	return time.Since(t).Round(100 * time.Millisecond)
}

// Every calls report every interval until the returned stop is called.
func Every(interval time.Duration, report func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				report()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// Sleep waits for d or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
