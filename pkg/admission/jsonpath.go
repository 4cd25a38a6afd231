package admission

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/client-go/util/jsonpath"
)

// celIdentifier matches the field names CEL can select with a dot.
var celIdentifier = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// celReserved are the words that the API server's CEL escapes as
// __word__ when they name a field.
var celReserved = map[string]bool{
	"true": true, "false": true, "null": true, "in": true, "as": true, "break": true, "const": true,
	"continue": true, "else": true, "for": true, "function": true, "if": true, "import": true, "let": true,
	"loop": true, "package": true, "namespace": true, "return": true, "var": true, "void": true, "while": true,
}

// value is a value read from the admitted object, in CEL.
type value struct {
	// present is a condition: the value can be read.
	present string
	// text is the value as a string, as kubectl's JSONPath prints it; it may
	// be evaluated only when present holds.
	text string
}

// orDefault returns v, or, when defaults gives name a default, a value
// always present: v's text where v can be read, else the default.
func (v value) orDefault(defaults map[string]string, name string) value {
	d, ok := defaults[name]
	if !ok {
		return v
	}
	return value{present: "true", text: fmt.Sprintf("((%s) ? %s : %s)", v.present, v.text, quote(d))}
}

// checked returns v, a value read for the key name of kind, set only where
// it is a valid value, else the default where defaults gives name one, as
// the controller sets it. Where ifInvalid names the key, a value read that
// is no valid label value sets nothing, nor the default: the controller
// makes it valid after creation, which CEL cannot do (it has no hash);
// the default is then only for a source that is missing.
func (v value) checked(kind, name string, defaults, ifInvalid map[string]string) value {
	valid := validValue(kind, v.text)
	if _, fixed := ifInvalid[name]; !fixed {
		v.present += " && " + valid
		return v.orDefault(defaults, name)
	}
	out := v.orDefault(defaults, name)
	out.present = fmt.Sprintf("(%s) && (!(%s) || (%s))", out.present, v.present, valid)
	return out
}

// jsonPathValue translates a JSONPath template as rules accept it into CEL
// reading the same value from the admitted object. Only what CEL reads the
// same way is translated: literal text and expressions made of fields
// (".spec.x", "['x']") and non-negative list indexes ("[0]"). A value that
// is not a string, number or boolean makes the expression fail at
// admission, which the policy ignores: the controller sets the key.
func jsonPathValue(template string) (value, error) {
	p, err := jsonpath.Parse("value", template)
	if err != nil {
		return value{}, err
	}
	var present, parts []string
	for _, n := range p.Root.Nodes {
		switch n := n.(type) {
		case *jsonpath.TextNode:
			if n.Text != "" {
				parts = append(parts, quote(n.Text))
			}
		case *jsonpath.ListNode:
			opt, err := optionalPath(n)
			if err != nil {
				return value{}, err
			}
			present = append(present, opt+".hasValue()")
			parts = append(parts, "string("+opt+".value())")
		default:
			return value{}, unsupported(n)
		}
	}
	if len(present) == 0 {
		return value{}, fmt.Errorf("template %q reads nothing", template)
	}
	return value{present: strings.Join(present, " && "), text: strings.Join(parts, " + ")}, nil
}

// optionalPath is the CEL optional that one {...} expression reads.
func optionalPath(list *jsonpath.ListNode) (string, error) {
	var b strings.Builder
	b.WriteString("object")
	if len(list.Nodes) == 0 {
		return "", fmt.Errorf("an empty expression is not read at admission")
	}
	for _, n := range list.Nodes {
		switch n := n.(type) {
		case *jsonpath.FieldNode:
			switch {
			case n.Value == "":
				return "", fmt.Errorf("the whole object is not read at admission")
			case celIdentifier.MatchString(n.Value) && !celReserved[n.Value]:
				b.WriteString(".?" + n.Value)
			default:
				b.WriteString("[?" + quote(n.Value) + "]")
			}
		case *jsonpath.ArrayNode:
			p := n.Params
			if !p[0].Known || p[0].Value < 0 || !p[1].Derived || p[2].Known {
				return "", unsupported(n)
			}
			fmt.Fprintf(&b, "[?%d]", p[0].Value)
		default:
			return "", unsupported(n)
		}
	}
	return b.String(), nil
}

// unsupported says which part of a template CEL does not read the way
// kubectl's JSONPath does.
func unsupported(n jsonpath.Node) error {
	what := "this template"
	switch n := n.(type) {
	case *jsonpath.ArrayNode:
		what = "a slice, a wildcard or a negative index"
	case *jsonpath.FilterNode:
		what = "a filter [?(...)]"
	case *jsonpath.RecursiveNode:
		what = "recursive descent (..)"
	case *jsonpath.UnionNode:
		what = "a union [a,b]"
	case *jsonpath.WildcardNode:
		what = "a wildcard"
	case *jsonpath.IdentifierNode:
		what = "{" + n.Name + "}"
	}
	return fmt.Errorf("%s cannot be read at admission; only fields and list indexes such as {.spec.containers[0].image} can", what)
}
