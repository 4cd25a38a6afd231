package celexpr

import (
	"fmt"
	"slices"

	"github.com/google/cel-go/common/ast"
)

// Rebase returns src with each reference to the variable object replaced
// by root, a CEL expression in parentheses: a condition written for a Pod
// then reads, say, the pod template of the workload admitted, which has a
// Pod's metadata and spec. Every other character of src is kept.
func Rebase(src, root string) (string, error) {
	env, err := celEnv()
	if err != nil {
		return "", fmt.Errorf("CEL environment: %w", err)
	}
	parsed, iss := env.Parse(src)
	if iss.Err() != nil {
		return "", iss.Err()
	}
	native := parsed.NativeRep()
	info := native.SourceInfo()
	var at []int // rune offsets of the references to object
	var shadowed bool
	var walk func(x ast.Expr)
	walk = func(x ast.Expr) {
		if x.Kind() == ast.IdentKind && x.AsIdent() == Object {
			if r, ok := info.GetOffsetRange(x.ID()); ok {
				at = append(at, int(r.Start))
			}
			return
		}
		if x.Kind() == ast.ComprehensionKind {
			c := x.AsComprehension()
			shadowed = shadowed || c.IterVar() == Object || c.IterVar2() == Object || c.AccuVar() == Object
		}
		for _, c := range children(x) {
			walk(c)
		}
	}
	walk(native.Expr())
	if shadowed {
		return "", fmt.Errorf("a comprehension variable named %s hides the object", Object)
	}
	runes := []rune(src)
	slices.Sort(at)
	at = slices.Compact(at)
	for i := len(at) - 1; i >= 0; i-- {
		o := at[i]
		if o < 0 || o+len(Object) > len(runes) || string(runes[o:o+len(Object)]) != Object {
			return "", fmt.Errorf("column %d: cannot find %s where the parser says it is", o+1, Object)
		}
		runes = slices.Concat(runes[:o], []rune("("+root+")"), runes[o+len(Object):])
	}
	return string(runes), nil
}
