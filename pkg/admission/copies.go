package admission

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// qualifiedName is the API server's pattern for a qualified name (a
// label key, an annotation key lowercased): an optional DNS subdomain
// prefix and '/', then a name; their lengths are checked apart.
const qualifiedName = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`

// validKey is a CEL condition: the string k is a key of kind the API
// server accepts and the controller copies: a qualified name (an
// annotation key lowercased), and no marker annotation.
func validKey(kind, k string) string {
	if kind == "annotation" {
		k += ".lowerAscii()"
	}
	cond := fmt.Sprintf(`%[1]s.matches(%[2]s) && (%[1]s.contains("/") ? size(%[1]s.split("/")[0]) <= 253 && size(%[1]s.split("/")[1]) <= 63 : size(%[1]s) <= 63)`,
		k, quote(qualifiedName))
	if kind == "annotation" {
		cond += fmt.Sprintf(` && !(%s.contains("/") && %s.split("/")[0].endsWith(%s))`, k, k, quote("."+patch.MarkerDomain))
	}
	return cond
}

// copy is a key set of a rule computed in CEL, as admission computes it.
type copy struct {
	kind string
	// variable is the policy's variable that holds the keys it sets and
	// their values, a map: those the expression yields that are valid,
	// that the rule sets no other way, and that the object lacks.
	variable admissionregistrationv1.Variable
	// marked is a CEL list of the marker entries of those keys.
	marked string
}

// copies returns the key sets of r computed in CEL, which admission sets
// as the controller copies them, in the rule's order. Each sets only keys
// the object lacks (a copy never changes another's key), or, at UPDATE, a
// key the policy set (listed in the marker) that the request leaves as it
// was while the expression now yields another value, so that the key
// follows the object as the controller would have it; never a key the
// rule sets otherwise or removes, or an earlier set of the rule copies,
// nor one that is no valid key or value. A key set read from a related
// object is left to the controller, which follows it, and so are the
// later sets of its kind, whose keys it may take first, and the sets of a
// kind that an earlier rule sets keys of; notes say so.
func (tr *translator) copies(r *rule) []copy {
	var out []copy
	for _, kind := range []string{"annotation", "label"} {
		m := r.Of(kind)
		var earlier []string // the variables of the sets of kind before
		for _, set := range m.Copy {
			from := copyFrom(&set)
			if from == "" || r.ReadsOwnerObject(set.CEL) {
				tr.note(r, "copy", fmt.Sprintf("%s %s: copied by the controller, which follows the objects it is read from; "+
					"the %ss the rule copies after it are too", set.From(), &set, kind))
				break
			}
			if e := tr.earlierSetter(r, kind); e != "" {
				tr.note(r, "copy", fmt.Sprintf("left to the controller: rule %s, earlier in the file, may set %ss the rule may copy", e, kind))
				break
			}
			name := fmt.Sprintf("copy%d", len(out))
			out = append(out, copySet(kind, name, from, r.keys, m.Remove, earlier))
			earlier = append(earlier, "variables."+name)
		}
	}
	return out
}

// copyFrom is the CEL map of the keys of kind that set may copy, with
// their values: what its expression yields; "" for a set read from a
// related object, which admission leaves to the controller: a value set
// at admission from the namespace, say, would not follow a later change
// of the namespace, as the controller cannot tell that change from
// someone else's edit of the key (see reconcile's forfeit).
func copyFrom(set *rulefile.KeySet) string {
	if set.CEL == "" {
		return ""
	}
	return "(" + set.CEL + ")"
}

// copySet is the copy of kind whose map from yields, held in the variable
// name: the keys the object lacks that are valid keys with valid values,
// that none of keys of the kind sets, that remove does not remove, and
// that no map of earlier holds.
func copySet(kind, name, from string, keys []*key, remove []string, earlier []string) copy {
	var own []string
	for _, k := range keys {
		if k.kind == kind {
			own = append(own, quote(k.name))
		}
	}
	for _, k := range remove {
		own = append(own, quote(k))
	}
	prefix := `""`
	if kind == "label" {
		prefix = quote(patch.MarkerLabel)
	}
	cur := fmt.Sprintf("object.metadata.?%ss.orValue({})", kind)
	old := fmt.Sprintf("(oldObject == null ? {} : oldObject.metadata.?%ss.orValue({}))", kind)
	// Absent; or the policy's, unchanged by this request, and now another.
	set := fmt.Sprintf("(!(k in %[1]s) || (%[3]s + k in variables.marked && %[1]s[k] != v && k in %[2]s && %[2]s[k] == %[1]s[k]))", cur, old, prefix)
	cond := fmt.Sprintf("%s && !(k in [%s])", set, strings.Join(own, ", "))
	for _, e := range earlier {
		cond += " && !(k in " + e + ")"
	}
	expr := fmt.Sprintf("%s.transformMapEntry(k, v, %s && %s && %s, {k: v})", from, cond, validKey(kind, "k"), validValue(kind, "v"))
	return copy{kind: kind,
		variable: admissionregistrationv1.Variable{Name: name, Expression: expr},
		marked:   fmt.Sprintf("variables.%s.transformList(k, v, %s + k)", name, prefix)}
}

// earlierSetter names a rule before r, for the same resources, that sets
// or copies keys of kind, and that writes; "" when there is none.
func (tr *translator) earlierSetter(r *rule, kind string) string {
	for _, e := range tr.rules {
		if e.Index >= r.Index {
			break
		}
		if _, shared := sharesResource(r, e); !shared || e.Audit() {
			continue
		}
		if len(e.Of(kind).Copy) > 0 || slices.ContainsFunc(e.keys, func(k *key) bool { return k.kind == kind }) {
			return e.Name
		}
	}
	return ""
}
