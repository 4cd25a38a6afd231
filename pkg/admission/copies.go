package admission

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
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

// copies returns the key sets of r computed in CEL that admission sets,
// as the controller copies them: only where the object lacks the key (a
// copy never changes another's key), never a key the rule sets otherwise
// or removes, nor one that is no valid key or value. A key set read from
// a related object is left to the controller, which follows it, and so is
// a CEL set of a kind that an earlier rule sets keys of in a way
// admission cannot tell apart from the set's; notes say so.
func (tr *translator) copies(r *rule) []copy {
	var out []copy
	related := false
	for _, kind := range []string{"annotation", "label"} {
		m := r.Of(kind)
		for _, set := range m.Copy {
			if set.CEL == "" {
				related = true
				continue
			}
			if e := tr.earlierSetter(r, kind); e != "" {
				tr.note(r, "copy", fmt.Sprintf("left to the controller: rule %s, earlier in the file, may set %ss the expression may yield", e, kind))
				continue
			}
			var own []string
			for _, k := range r.keys {
				if k.kind == kind {
					own = append(own, quote(k.name))
				}
			}
			for _, k := range m.Remove {
				own = append(own, quote(k))
			}
			current := fmt.Sprintf("object.metadata.?%ss.orValue({})", kind)
			name := fmt.Sprintf("copy%d", len(out))
			expr := fmt.Sprintf("(%s).transformMapEntry(k, v, !(k in %s) && !(k in [%s]) && %s && %s, {k: v})",
				set.CEL, current, strings.Join(own, ", "), validKey(kind, "k"), validValue(kind, "v"))
			prefix := `""`
			if kind == "label" {
				prefix = quote(patch.MarkerLabel)
			}
			out = append(out, copy{kind: kind,
				variable: admissionregistrationv1.Variable{Name: name, Expression: expr},
				marked:   fmt.Sprintf("variables.%s.transformList(k, v, %s + k)", name, prefix)})
		}
	}
	if related {
		tr.note(r, "copy", "key sets read from related objects are copied by the controller, which follows the objects they are read from")
	}
	return out
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
