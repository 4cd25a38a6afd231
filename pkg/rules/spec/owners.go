package spec

import (
	"slices"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Owners says how {fromOwner: …} walks an object's controller owners.
type Owners struct {
	// Hop is the owner resource whose object is read ("owner": the first
	// one of that resource in the chain), as written; "" reads the root,
	// the last owner the walk reaches.
	Hop string
	// Through are the owner resources walked, as written: those the key
	// names ("through"), else source.DefaultOwners; Hop among them.
	Through []string
}

// Complete fills in what o leaves to the defaults: the owner resources
// walked through, and the hop among them.
func (o *Owners) Complete() {
	if o.Through == nil {
		o.Through = slices.Clone(source.DefaultOwners)
	}
	if o.Hop != "" && !slices.Contains(o.Through, o.Hop) {
		o.Through = append(o.Through, o.Hop)
	}
}

// OwnerResources returns the owner resources, as written, that r's
// fromOwner values walk through, sorted: the resources whose objects the
// controller watches for them.
func (r *Rule) OwnerResources() []string {
	var out []string
	for _, o := range r.owners() {
		for _, name := range o.Through {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}
