package explain

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kube-annotator/kube-annotator/pkg/diff"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/verdict"
)

// Print writes x as text: the object, each rule's verdict, the keys and
// their owners, conflicts, a fight, and what run would change.
func Print(w io.Writer, x *Object) error {
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
func printVerdict(w io.Writer, v verdict.Verdict) {
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
		if want.Once {
			suffix = "\trecorded once: kept as first written"
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
		if want.MadeValid != "" {
			fmt.Fprintf(w, "      made a valid label value (ifInvalid): %s\n", want.MadeValid)
		}
	}
	for _, p := range v.Problems {
		fmt.Fprintf(w, "    value not read: %s\n", p)
	}
}

// printInputs writes each input on a line of its own after prefix: the
// field and its value, or "absent".
func printInputs(w io.Writer, prefix string, inputs []verdict.Input) {
	for _, in := range inputs {
		v := "absent"
		if in.Value != nil {
			v = "= " + *in.Value
		}
		fmt.Fprintf(w, "%s%s %s\n", prefix, in.Field, v)
	}
}

// printKeyChanges writes changes under title, each key with its old and
// new value and the rule that wants it.
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
		fmt.Fprintf(w, "  %s %s\t%s → %s\t(%s)\n", c.Kind, c.Key, diff.Quoted(c.Old), diff.Quoted(c.New), rule)
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

// ownersText lists the field managers that own a key.
func ownersText(owners []string) string {
	if len(owners) == 0 {
		return "(no owner recorded)"
	}
	return strings.Join(owners, ", ")
}

// printFight writes what explain knows of a fight over the object.
func printFight(w io.Writer, x *Object, now time.Time) {
	switch {
	case x.FightUnknown != "":
		fmt.Fprintf(w, "\nFight: unknown: %s\n", x.FightUnknown)
	case x.Fight != nil:
		state := "goes on"
		if !x.Fight.Ongoing {
			state = "has likely ended (no report since)"
		}
		fmt.Fprintf(w, "\nFight (the controller's event, %s ago): it %s\n", now.Sub(x.Fight.Reported).Round(time.Second), state)
		fmt.Fprintf(w, "  field manager %q reverts what the rules set; the controller's writes to the object back off\n", x.Fight.Manager)
		for _, k := range x.Fight.Keys {
			rule := "no rule wants it any more"
			if k.Rule != "" {
				rule = "rule " + k.Rule
			}
			fmt.Fprintf(w, "  %s %s\t(%s)\n", k.Kind, k.Key, rule)
		}
	}
}
