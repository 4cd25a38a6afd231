package rulefile

import (
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/yamlfield"
	"k8s.io/apimachinery/pkg/util/validation"
)

// decoder walks the YAML node tree against the schema (yamlfield.Decoder),
// knowing the rules decoded so far.
type decoder struct {
	yamlfield.Decoder
	names map[string]int // rule name → index of the first rule using it
	index int            // index of the rule being decoded
	// readsOwner is the first CEL expression of the rule being decoded
	// that reads ownerObject, and ownerObject the rule's field that says
	// which owner it is; nil for none.
	readsOwner, ownerObject *yaml.Node
	depth                   int // value forms given as defaults around the one decoded
}

func (d *decoder) file(root *yaml.Node) *File {
	d.Nodes = yamlfield.CountNodes(root)
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	n = yamlfield.Deref(n)
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, "", `expected a mapping with a "rules" list, got %s`, yamlfield.Describe(n))
		return nil
	}
	f := &File{Version: Version}
	fileSchema.decode(d, n, "", f)
	f.SetLines(d.Lines)
	return f
}

func (d *decoder) rules(n *yaml.Node, path string) []Rule {
	if n.Kind != yaml.SequenceNode {
		d.Errorf(n, path, "must be a list of rules, got %s", yamlfield.Describe(n))
		return nil
	}

	d.names = map[string]int{}
	out := make([]Rule, 0, len(n.Content))
	for i, item := range n.Content {
		if d.Exhausted() {
			break
		}
		d.index = i
		out = append(out, d.rule(yamlfield.Deref(item), fmt.Sprintf("%s[%d]", path, i)))
	}
	if len(n.Content) > MaxRules && !d.Capped {
		d.Errorf(n, path, "holds %d rules, more than the %d a file may hold: loading compares every pair of rules, "+
			"which grows with the square of their number; combine rules that differ only in their names or namespaces", len(n.Content), MaxRules)
	}
	return out
}

func (d *decoder) rule(n *yaml.Node, path string) Rule {
	var r Rule
	d.readsOwner, d.ownerObject = nil, nil
	d.LineOf(path, n)
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "must be a mapping with name, resources and what to set, got %s", yamlfield.Describe(n))
		return r
	}
	if seen := ruleSchema.decode(d, n, path, &r); !ruleSchema.setsSome(seen) {
		d.Errorf(n, path, "sets nothing: give %s", setters)
	}
	for _, kind := range []string{AnnotationKind, LabelKind} {
		m := r.Of(kind)
		d.setAndRemove(n, FieldPath(path, "remove"+kindField[kind]), m.Remove, m.Values, m.Computed())
	}
	d.relatedFor(n, path, &r)
	d.ownerObjectFor(path, &r)
	if r.PodTemplates {
		d.podTemplates(n, path, &r)
	}
	return r
}

// setAndRemove reports keys a rule both sets and removes.
func (d *decoder) setAndRemove(n *yaml.Node, path string, remove []string, set ...map[string]string) {
	for _, k := range remove {
		if slices.ContainsFunc(set, func(m map[string]string) bool { _, ok := m[k]; return ok }) {
			d.Errorf(n, path, "%q is both set and removed by the rule", k)
		}
	}
}

func (d *decoder) ruleName(n *yaml.Node, path string) string {
	name, ok := d.Str(n, path)
	if !ok {
		return ""
	}
	if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
		d.Errorf(n, path, "invalid name %q: %s", name, strings.Join(msgs, "; "))
	}
	if first, dup := d.names[name]; dup {
		d.Errorf(n, path, "duplicate name %q; rules[%d] already uses it", name, first)
	} else {
		d.names[name] = d.index
	}
	return name
}

func (d *decoder) resources(n *yaml.Node, path string) []string {
	return d.UniqueList(n, path, "resource names", "must name at least one resource", "resource", func(item *yaml.Node, p, s string) bool {
		switch {
		case s == "":
			d.Errorf(item, p, "must not be empty")
		case strings.ContainsAny(s, " \t\n/,"):
			d.Errorf(item, p, "invalid resource %q: name one resource as kubectl does, e.g. deployments, deploy or frigates.ship.nwiizo.dev", s)
		default:
			return true
		}
		return false
	})
}
