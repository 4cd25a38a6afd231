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
	"github.com/kube-annotator/kube-annotator/pkg/rules"
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
		printVerdict(tw, v)
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

// printVerdict writes what one rule makes of the object: whether it
// selects it, its when condition with the fields it read, and the keys it
// wants, each computed value with how it is computed and from what.
func printVerdict(w io.Writer, v rules.Verdict) {
	if !v.Selects {
		fmt.Fprintf(w, "  %s (%s)\tdoes not select: %s\n", v.Rule, v.Mode, v.Reason)
	} else {
		fmt.Fprintf(w, "  %s (%s)\tselects; wants:\n", v.Rule, v.Mode)
	}
	if v.When != nil && v.Selects {
		fmt.Fprintf(w, "    when %q holds\n", v.When.Expression)
	}
	if v.When != nil {
		printInputs(w, "      reading ", v.When.Inputs)
	}
	for _, want := range v.Wants {
		suffix := ""
		if want.IfAbsent {
			suffix = "\tonly where absent"
		}
		fmt.Fprintf(w, "    %s %s\t%s%s\n", want.Kind, want.Key, valueOrRemoved(want.Value), suffix)
		if want.From != "" {
			fmt.Fprintf(w, "      computed by %s\n", want.From)
			printInputs(w, "        reading ", want.Inputs)
		}
		if want.Input != "" {
			fmt.Fprintf(w, "      read from the %s\n", want.Input)
		}
		if want.Defaulted != "" {
			fmt.Fprintf(w, "      the default, as the source is missing: %s\n", want.Defaulted)
		}
	}
	for _, p := range v.Problems {
		fmt.Fprintf(w, "    value not read: %s\n", p)
	}
}

// printInputs writes each input on a line of its own after prefix: the
// field and its value, or "absent".
func printInputs(w io.Writer, prefix string, inputs []rules.Input) {
	for _, in := range inputs {
		v := "absent"
		if in.Value != nil {
			v = "= " + *in.Value
		}
		fmt.Fprintf(w, "%s%s %s\n", prefix, in.Field, v)
	}
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
