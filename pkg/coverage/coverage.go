package coverage

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/scan"
)

// Count is the number of objects on which a rule's key is in a state.
type Count struct {
	// Namespace is the objects' namespace, when counted by namespace ("":
	// cluster-scoped objects).
	Namespace string `json:"namespace,omitempty"`
	reconcile.KeyState
	Objects int `json:"objects"`
}

// Object is an object on which a rule's key is in a state asked for.
type Object struct {
	// Resource is the resource as "resource.version.group".
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	reconcile.KeyState
	// Reason is why the rule could not compute the key's value, as
	// explain says it; "" for the other states.
	Reason string `json:"reason,omitempty"`
}

// Report is what Scan found.
type Report struct {
	// Counts are sorted by namespace, rule, kind, key and state (in the
	// order of reconcile.States).
	Counts []Count `json:"counts"`
	// Objects are the objects in the states asked for, in list order.
	Objects []Object `json:"objects,omitempty"`
	// Covered says every key counted is compliant, foreign, opted-out or unrecorded:
	// nothing is left for the controller to do or for a user to fix.
	Covered bool `json:"covered"`
}

// Options say what Scan counts and lists.
type Options struct {
	// Namespace restricts the scan to one namespace; "" scans them all.
	Namespace string
	// ByNamespace counts each namespace apart.
	ByNamespace bool
	// States are the states whose objects are listed.
	States []string
	// Manager is the field manager run writes as.
	Manager string
	// Look finds the objects the rules read besides the objects ruled.
	Look source.Lookup
	// Examined, when not nil, is told of each object examined.
	Examined func(resource string, n int)
}

// covered are the states that leave nothing to do: what the rules want,
// or what a user chose.
var covered = []string{reconcile.StateCompliant, reconcile.StateForeign, reconcile.StateOptedOut, reconcile.StateUnrecorded}

// Scan lists the objects of targets through dyn and counts, for each
// rule's key, the objects on which it is in each state, as the controller
// would find them; unset counts the keys the rules could not compute.
func Scan(ctx context.Context, dyn dynamic.Interface, targets []*rules.Target, o Options, unset *scan.Unset) (Report, error) {
	type counted struct {
		namespace string
		reconcile.KeyState
	}
	counts := map[counted]int{}
	r := Report{Counts: []Count{}}
	for _, t := range targets {
		resource, n := source.GVRString(t.GVR), 0
		err := scan.Decisions(ctx, dyn, t, o.Namespace, o.Manager, o.Look, unset, func(u *unstructured.Unstructured, d reconcile.Decision) error {
			ns := ""
			if o.ByNamespace {
				ns = u.GetNamespace()
			}
			d.Coverage(u, reconcile.StatePending, func(k reconcile.KeyState) {
				counts[counted{ns, k}]++
				if slices.Contains(o.States, k.State) {
					r.Objects = append(r.Objects, Object{Resource: resource, Namespace: u.GetNamespace(), Name: u.GetName(), KeyState: k, Reason: d.Why(k)})
				}
			})
			if n++; o.Examined != nil {
				o.Examined(resource, n)
			}
			return nil
		})
		if err != nil {
			return Report{}, fmt.Errorf("list %s: %w", resource, err)
		}
	}
	r.Covered = true
	for _, c := range slices.SortedFunc(maps.Keys(counts), func(a, b counted) int {
		return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Key, b.Key),
			slices.Index(reconcile.States, a.State)-slices.Index(reconcile.States, b.State))
	}) {
		r.Counts = append(r.Counts, Count{Namespace: c.namespace, KeyState: c.KeyState, Objects: counts[c]})
		r.Covered = r.Covered && slices.Contains(covered, c.State)
	}
	return r, nil
}

// CheckStates reports a state that is not one of reconcile.States.
func CheckStates(states []string) error {
	for _, s := range states {
		if !slices.Contains(reconcile.States, s) {
			return fmt.Errorf("%q: must be one of %s", s, strings.Join(reconcile.States, ", "))
		}
	}
	return nil
}

// Progress returns, when w is a terminal, a func for Options.Examined that
// keeps a line on w up to date, and done, which clears it; elsewhere
// neither writes.
func Progress(w io.Writer) (examined func(resource string, n int), done func()) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, func() {}
	}
	return func(resource string, n int) {
			if n%100 == 0 {
				fmt.Fprintf(w, "\r\033[K%s: examined %d", resource, n)
			}
		}, func() {
			fmt.Fprint(w, "\r\033[K")
		}
}
