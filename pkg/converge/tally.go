package converge

import (
	"fmt"
	"io"
	"sync/atomic"
	"text/tabwriter"
)

// Tally counts what a Converger did to one resource.
type Tally struct {
	// Resource is the resource, as source.GVRString writes it, or the
	// field of the rules file that names it.
	Resource string
	examined atomic.Int64
	changed  atomic.Int64
	errors   atomic.Int64
	// Note says why the resource was not converged, if it was not.
	Note string
}

// Failed reports whether the resource could not be converged.
func (tl *Tally) Failed() bool { return tl.Note != "" || tl.errors.Load() > 0 }

// PrintSummary writes tallies as a table, with their total.
func PrintSummary(out io.Writer, tallies []*Tally) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RESOURCE\tEXAMINED\tCHANGED\tERRORS\tNOTE")
	var ex, ch, er int64
	for _, t := range tallies {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\n", t.Resource, t.examined.Load(), t.changed.Load(), t.errors.Load(), t.Note)
		ex, ch, er = ex+t.examined.Load(), ch+t.changed.Load(), er+t.errors.Load()
	}
	fmt.Fprintf(w, "TOTAL\t%d\t%d\t%d\t\n", ex, ch, er)
	_ = w.Flush()
}
