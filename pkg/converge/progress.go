package converge

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// Progress reports how far a Converger has come: on a terminal a line that
// updates in place, otherwise one plain line per resource when it is done.
type Progress struct {
	w    io.Writer
	live bool
}

// NewProgress returns a Progress that writes to w.
func NewProgress(w io.Writer) *Progress {
	f, ok := w.(*os.File)
	return &Progress{w: w, live: ok && term.IsTerminal(int(f.Fd()))}
}

// track reports on t until the returned stop is called.
func (p *Progress) track(t *Tally) (stop func()) {
	line := func() string {
		return fmt.Sprintf("%s: examined %d, changed %d, errors %d", t.Resource, t.examined.Load(), t.changed.Load(), t.errors.Load())
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
