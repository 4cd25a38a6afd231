package resolve

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/yamlfield"
	"github.com/kube-annotator/kube-annotator/pkg/staticdiscovery"
)

// NewOffline returns a Resolver that asks no server: it knows the built-in
// resources of the Kubernetes version the client library was built for
// and the custom resources the CustomResourceDefinitions in crdFiles
// define (see staticdiscovery), and resolves names among them as New does
// among a cluster's. Its ErrNotServed errors say so. Its Schema returns
// the schemas a server would publish for them: the built-in resources'
// from staticdiscovery's copy, the custom resources' from their CRDs.
//
// crdSetting names how the caller's user gives CRD files (the command
// line's flag), for the errors of a name that none defines; "" words
// them without it.
func NewOffline(crdSetting string, crdFiles ...string) (*Resolver, error) {
	builtIn, err := staticdiscovery.BuiltIn()
	if err != nil {
		return nil, err
	}
	crds, crdSchemas, err := staticdiscovery.ReadCRDs(crdFiles...)
	if err != nil {
		return nil, err
	}
	// The documents are read only when a schema is asked for: for CEL.
	docs := sync.OnceValues(func() (staticdiscovery.Documents, error) {
		builtInDocs, err := staticdiscovery.BuiltInOpenAPI()
		if err != nil {
			return nil, err
		}
		crdDocs, err := crdSchemas.Documents()
		if err != nil {
			return nil, err
		}
		all := maps.Clone(builtInDocs)
		maps.Copy(all, crdDocs) // a CRD's group is never a built-in one
		return all, nil
	})
	d, err := staticdiscovery.NewWithOpenAPI(docs, append(slices.Clone(builtIn), crds...)...)
	if err != nil {
		return nil, err
	}
	r := New(d)
	r.offline, r.crdSetting = true, crdSetting
	return r, nil
}

// Offline reports whether r asks no server (NewOffline).
func (r *Resolver) Offline() bool { return r.offline }

// suggest returns the served name closest to name, the way it is written
// (plain, or with a group), within two edits (one for short names); or "".
func (r *Resolver) suggest(name string) string {
	_, lists, _ := r.cached.ServerGroupsAndResources() // what discovery answered, if only in part
	name = strings.ToLower(name)
	dotted := strings.Contains(name, ".")
	best, bestDist := "", 2
	if len(name) <= 4 {
		bestDist = 1
	}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range l.APIResources {
			if strings.Contains(res.Name, "/") {
				continue // a subresource
			}
			candidates := append([]string{res.Name, res.SingularName}, res.ShortNames...)
			switch {
			case dotted && gv.Group == "":
				continue // the core group's resources have no dotted names
			case dotted:
				candidates = []string{res.Name + "." + gv.Group, res.Name + "." + gv.Version + "." + gv.Group}
			}
			for _, c := range candidates {
				if d := yamlfield.EditDistance(name, c); c != "" && d > 0 && d <= bestDist && (best == "" || d < bestDist) {
					best, bestDist = c, d
				}
			}
		}
	}
	return best
}

// ResolveAsWritten resolves name as Resolve does, but for a name with a
// group that is not served (or not known offline): that one is taken as
// written, with a warning, and as namespaced, which grants more (watching
// namespaces) rather than less than the controller may need once the
// resource is served. The rbac command grants what it returns.
func (r *Resolver) ResolveAsWritten(name string) (res source.Resource, warning string, err error) {
	res, err = r.Resolve(name)
	if err == nil {
		return res, "", nil
	}
	if gr := schema.ParseGroupResource(name); gr.Group != "" && errors.Is(err, ErrNotServed) {
		where := "served by the cluster"
		if r.Offline() {
			where = "known offline (built in, or defined by a " + r.crdSetting + " file)"
		}
		return source.Resource{GVR: gr.WithVersion(""), Namespaced: true},
			fmt.Sprintf("%s is not %s; granting resource %q in group %q as written", name, where, gr.Resource, gr.Group), nil
	}
	return source.Resource{}, "", err
}
