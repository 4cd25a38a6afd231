package lint

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// SchemaFunc returns the OpenAPI schema of the objects of a resource, with
// its references resolved, or nil when none is known (see
// resolve.Resolver's Schema).
type SchemaFunc func(source.Resource) (*spec.Schema, error)

// Targeted is a resource and the rules of a file that target it, by
// their index in the file.
type Targeted struct {
	Resource source.Resource
	Rules    []int
}

// TypeCheck type-checks each CEL expression of the rules of f against
// the schema of every resource of targets that the rule targets, with
// object typed by it, as the API server type-checks admission policies;
// namespaceObject stays dyn. f was loaded from name. A resource whose
// schema is not known (schemas returns nil or an error), or types
// nothing, is left to the dyn check done at load. Each schema is asked
// for once.
//
// An expression that does not type-check is returned in an *Error, one
// FieldError each, naming the rule, the resource and the checker's
// message: a typo in a field name, or an operand of the wrong type, which
// would otherwise fail on every object. The evaluation of the rules is
// unchanged: the check is made at load only.
func TypeCheck(name string, f *rulefile.File, targets []Targeted, schemas SchemaFunc) error {
	var errs []rulefile.FieldError
	envs := map[schema.GroupVersionKind]*cel.Env{}
	for _, t := range targets {
		if !slices.ContainsFunc(t.Rules, func(i int) bool { return len(celSources(&f.Rules[i])) > 0 }) {
			continue // no schema needed
		}
		gvk := t.Resource.GVR.GroupVersion().WithKind(t.Resource.Kind)
		env, seen := envs[gvk]
		if !seen {
			env = typedEnv(t.Resource, schemas)
			envs[gvk] = env
		}
		if env == nil {
			continue
		}
		for _, i := range t.Rules {
			for _, x := range celSources(&f.Rules[i]) {
				if _, err := celexpr.Check(env, x.src, x.want); err != nil {
					field := fmt.Sprintf("rules[%d].%s", i, x.field)
					errs = append(errs, rulefile.FieldError{Line: f.Line(field), Field: field, Message: fmt.Sprintf(
						"rule %q: CEL %s %q does not type-check against the schema of %s: %v",
						f.Rules[i].Name, x.what, x.src, source.GVRString(t.Resource.GVR), err)})
				}
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	return &rulefile.Error{File: name, Fields: errs}
}

// typedEnv returns the CEL environment with object typed by the schema of
// res, or nil when it is not known.
func typedEnv(res source.Resource, schemas SchemaFunc) *cel.Env {
	s, err := schemas(res)
	if err != nil || s == nil {
		return nil
	}
	dt := celexpr.ObjectDeclType(s, res.Kind)
	if dt == nil {
		return nil
	}
	env, err := celexpr.NewEnv(dt)
	if err != nil {
		return nil // a schema CEL cannot declare is one not known
	}
	return env
}

// celSource is one CEL expression of a rule, as written.
type celSource struct {
	field string // path from the rule: "when", "labels.KEY.cel"
	what  string // "condition" or "value"
	src   string
	want  *types.Type
}

// celSources returns the CEL expressions of rule c: its when condition,
// then its cel values by kind and key.
func celSources(c *rulefile.Rule) []celSource {
	var out []celSource
	if c.When != "" {
		out = append(out, celSource{field: "when", what: "condition", src: c.When, want: celexpr.BoolType})
	}
	for _, kind := range []struct {
		field string
		from  map[string]string
	}{{"annotations", c.Annotations.CEL}, {"labels", c.Labels.CEL}} {
		for _, k := range slices.Sorted(maps.Keys(kind.from)) {
			out = append(out, celSource{field: rulefile.FieldPath(kind.field, k) + ".cel", what: "value", src: kind.from[k], want: celexpr.StringType})
		}
	}
	return out
}
