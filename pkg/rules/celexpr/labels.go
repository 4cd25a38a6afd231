package celexpr

import (
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"k8s.io/apimachinery/pkg/util/validation"
)

// CopiesLabel reports whether src, a CEL value, only reads one label of
// object or of namespaceObject — object.metadata.labels.team,
// namespaceObject.metadata.?labels['team'].orValue('none') — or only
// chooses between literals (c ? 'stable' : 'canary'), so that what it
// yields is always a valid label value: the label's, or a literal that
// is one.
func CopiesLabel(src string) bool {
	env, err := celEnv()
	if err != nil {
		return false
	}
	parsed, iss := env.Parse(src)
	if iss.Err() != nil {
		return false
	}
	x := parsed.NativeRep().Expr()
	if validLiterals(x) {
		return true
	}
	if x.Kind() == ast.CallKind && x.AsCall().FunctionName() == "orValue" && x.AsCall().IsMemberFunction() && len(x.AsCall().Args()) == 1 {
		if d, ok := constString(x.AsCall().Args()[0]); !ok || len(validation.IsValidLabelValue(d)) > 0 {
			return false
		}
		x = x.AsCall().Target()
	}
	for _, root := range []string{Object, NamespaceObject} {
		if p, ok := objectPath(x, root); ok && len(p) == 3 && p[0] == "metadata" && p[1] == "labels" {
			return true
		}
	}
	return false
}

// validLiterals reports whether x yields one of its string literals, each
// a valid label value: a literal, or a condition choosing between such.
func validLiterals(x ast.Expr) bool {
	if s, ok := constString(x); ok {
		return len(validation.IsValidLabelValue(s)) == 0
	}
	if x.Kind() != ast.CallKind || x.AsCall().FunctionName() != operators.Conditional {
		return false
	}
	args := x.AsCall().Args()
	return validLiterals(args[1]) && validLiterals(args[2])
}
