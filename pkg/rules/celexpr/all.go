package celexpr

import (
	"fmt"
	"maps"
	"slices"
)

// CompileAll compiles the string-valued expressions of from, by key.
func CompileAll(from map[string]string) (map[string]*Expr, error) {
	if len(from) == 0 {
		return nil, nil
	}
	out := make(map[string]*Expr, len(from))
	for k, src := range from {
		e, err := Compile(src, StringType)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = e
	}
	return out, nil
}

// Sorted returns the expressions of the maps, each by key.
func Sorted(ms ...map[string]*Expr) []*Expr {
	var out []*Expr
	for _, m := range ms {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out = append(out, m[k])
		}
	}
	return out
}
