package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
)

// encode writes v to w as output says, json or yaml.
func encode(w io.Writer, output string, v any) error {
	if output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	data, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// printExplained writes x as text, or as output (json or yaml) says.
func printExplained(w io.Writer, output string, x *explained) error {
	if output != "" {
		return encode(w, output, x)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	ref := x.Name
	if x.Namespace != "" {
		ref = x.Namespace + "/" + x.Name
	}
	fmt.Fprintf(tw, "%s %s\n", x.Resource, ref)
	if x.Ignored != "" {
		fmt.Fprintf(tw, "Ignored: %s; nothing is written to it\n", x.Ignored)
	}
	fmt.Fprintln(tw, "\nRules:")
	for _, v := range x.Rules {
		if !v.Selects {
			fmt.Fprintf(tw, "  %s (%s)\tdoes not select: %s\n", v.Rule, v.Mode, v.Reason)
			continue
		}
		fmt.Fprintf(tw, "  %s (%s)\tselects; wants:\n", v.Rule, v.Mode)
		for _, want := range v.Wants {
			fmt.Fprintf(tw, "    %s %s\t%s\n", want.Kind, want.Key, valueOrRemoved(want.Value))
			if want.Defaulted != "" {
				fmt.Fprintf(tw, "      the default, as the source is missing: %s\n", want.Defaulted)
			}
		}
		for _, p := range v.Problems {
			fmt.Fprintf(tw, "    value not read: %s\n", p)
		}
	}
	fmt.Fprintln(tw, "\nKeys (owners from managedFields):")
	for _, k := range x.Keys {
		fmt.Fprintf(tw, "  %s %s\t%s\t%s\n", k.Kind, k.Key, shorten(k.Value), ownersText(k.Owners))
	}
	if len(x.Conflicts) > 0 {
		fmt.Fprintln(tw, "\nConflicts (file order decides):")
		for _, c := range x.Conflicts {
			fmt.Fprintf(tw, "  %s %s\trules %s and %s want different values; %s wins\n", c.Kind, c.Key, c.Kept, c.Dropped, c.Kept)
		}
	}
	printFight(tw, x, time.Now())
	printKeyChanges(tw, "\nWhat run would change:", x.Changes)
	if len(x.Audit) > 0 {
		printKeyChanges(tw, "\nWhat rules in audit mode would change (not written):", x.Audit)
	}
	return tw.Flush()
}

func printKeyChanges(w io.Writer, title string, changes []reconcile.KeyChange) {
	fmt.Fprintln(w, title)
	if len(changes) == 0 {
		fmt.Fprintln(w, "  nothing")
	}
	for _, c := range changes {
		rule := c.Rule
		if rule == "" {
			rule = "no rule wants it any more"
		}
		fmt.Fprintf(w, "  %s %s\t%s → %s\t(%s)\n", c.Kind, c.Key, quoted(c.Old), quoted(c.New), rule)
	}
}

// valueOrRemoved is a wanted value, quoted, or "removed".
func valueOrRemoved(v *string) string {
	if v == nil {
		return "removed"
	}
	return strconv.Quote(*v)
}

// shorten quotes v, cut to a line's worth (kubectl's last-applied
// configuration is a whole object).
func shorten(v string) string {
	const max = 60
	if len(v) > max {
		return strconv.Quote(v[:max]) + "…"
	}
	return strconv.Quote(v)
}

func ownersText(owners []string) string {
	if len(owners) == 0 {
		return "(no owner recorded)"
	}
	return strings.Join(owners, ", ")
}
