package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress reports how far `once` has come: on a terminal a line that
// updates in place, otherwise one plain line per resource when it is done.
type progress struct {
	w    io.Writer
	live bool
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	return &progress{w: w, live: ok && term.IsTerminal(int(f.Fd()))}
}

// track reports on t until the returned stop is called.
func (p *progress) track(t *tally) (stop func()) {
	line := func() string {
		return fmt.Sprintf("%s: examined %d, changed %d, errors %d", t.resource, t.examined.Load(), t.changed.Load(), t.errors.Load())
	}
	if !p.live {
		return func() { fmt.Fprintln(p.w, line()) }
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				fmt.Fprintf(p.w, "\r\033[K%s", line())
			case <-done:
				fmt.Fprintf(p.w, "\r\033[K%s\n", line())
				return
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}
