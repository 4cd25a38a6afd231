package coverage

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
)

// Print writes r as text: with objects listed, one line each with its
// reason; else a table of the counts, one row per namespace (when counted
// by namespace), rule and key, one column per state.
func Print(w io.Writer, r Report, listed bool) error {
	if listed {
		for _, o := range r.Objects {
			ref := o.Name
			if o.Namespace != "" {
				ref = o.Namespace + "/" + o.Name
			}
			line := fmt.Sprintf("%s %s: rule %s: %s %s: %s", o.Resource, ref, o.Rule, o.Kind, o.Key, o.State)
			if o.Reason != "" {
				line += ": " + o.Reason
			}
			fmt.Fprintln(w, line)
		}
		return nil
	}
	byNamespace := false
	for _, c := range r.Counts {
		byNamespace = byNamespace || c.Namespace != ""
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := []string{"RULE", "KIND", "KEY"}
	if byNamespace {
		head = append([]string{"NAMESPACE"}, head...)
	}
	for _, s := range reconcile.States {
		head = append(head, strings.ToUpper(s))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, row := range rows(r.Counts) {
		cells := []string{row.Rule, row.Kind, row.Key}
		if byNamespace {
			cells = append([]string{row.namespace}, cells...)
		}
		for _, n := range row.objects {
			cells = append(cells, fmt.Sprint(n))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// row is the counts of one rule's key, in one namespace, by state.
type row struct {
	namespace string
	reconcile.KeyState
	objects []int // by state, in the order of reconcile.States
}

// rows groups counts, sorted as Report.Counts, by namespace, rule and key.
func rows(counts []Count) []row {
	var out []row
	for _, c := range counts {
		k := reconcile.KeyState{Rule: c.Rule, Kind: c.Kind, Key: c.Key}
		if len(out) == 0 || out[len(out)-1].namespace != c.Namespace || out[len(out)-1].KeyState != k {
			out = append(out, row{namespace: c.Namespace, KeyState: k, objects: make([]int, len(reconcile.States))})
		}
		for i, s := range reconcile.States {
			if s == c.State {
				out[len(out)-1].objects[i] = c.Objects
			}
		}
	}
	return out
}
