package diff

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"k8s.io/client-go/dynamic"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/scan"
)

// Changes lists the objects of targets in namespace ("" for all) through
// dyn, with look for the objects the rules read besides them, and returns
// those that run, writing as manager, would change, and those that rules
// in audit mode would; unset counts the keys the rules could not compute.
func Changes(ctx context.Context, dyn dynamic.Interface, targets []*rules.Target, namespace, manager string, look source.Lookup, unset *scan.Unset) (pending, audited []*scan.Object, err error) {
	pending, audited = []*scan.Object{}, []*scan.Object{}
	for _, t := range targets {
		err := scan.Resource(ctx, dyn, t, namespace, manager, look, unset, func(_ *rules.Target, o *scan.Object) error {
			if o != nil && len(o.Changes) > 0 {
				pending = append(pending, o)
			}
			if o != nil && len(o.Audit) > 0 {
				audited = append(audited, o)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("list %s: %w", source.GVRString(t.GVR), err)
		}
	}
	return pending, audited, nil
}

// Print writes pending as text: each object, then each key to change with
// its old and new value.
func Print(w io.Writer, pending []*scan.Object) {
	for _, o := range pending {
		ref := o.Name
		if o.Namespace != "" {
			ref = o.Namespace + "/" + o.Name
		}
		fmt.Fprintf(w, "%s %s\n", o.Resource, ref)
		for _, c := range o.Changes {
			kind := ""
			if c.Kind == "label" {
				kind = "label "
			}
			fmt.Fprintf(w, "  %s%s: %s → %s\n", kind, c.Key, Quoted(c.Old), Quoted(c.New))
		}
	}
}

// Quoted is a value as a diff shows it, quoted; <none> for a missing key.
func Quoted(v *string) string {
	if v == nil {
		return "<none>"
	}
	return strconv.Quote(*v)
}
