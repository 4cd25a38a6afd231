package resolve

import (
	"errors"
	"fmt"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/lint"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// ErrUnreachable is what Compile's error matches, with errors.Is, when it
// could not ask the API server which resources it serves (network,
// authentication, an overloaded server, …): the file may be fine, but its
// rules cannot be resolved now. A server that cannot say which resources
// it serves cannot say which rules apply.
var ErrUnreachable = errors.New("could not ask the API server")

// Compile compiles file, loaded from path, against the cluster that
// resolveName asks (a Resolver's Resolve), with no rule applying in the
// namespaces that the globs exclude name. When schemas is not nil (a
// Resolver's Schema), the rules' CEL expressions are type-checked against
// the schemas of the resources they target (rules.TypeCheck). Every
// command that compiles rules, and run's reloader, compiles through it.
// Only names the server said it does not serve (ErrNotServed) are
// returned as unresolved: when it could not be asked, the error matches
// ErrUnreachable.
func Compile(path string, file *rulefile.File, resolveName rules.ResolveFunc, schemas lint.SchemaFunc, exclude []string) (*rules.Set, []rulefile.FieldError, error) {
	var unreachable error
	asked := func(name string) (source.Resource, error) {
		r, err := resolveName(name)
		if err != nil && !errors.Is(err, ErrNotServed) && unreachable == nil {
			unreachable = err
		}
		return r, err
	}
	set, unresolved, err := rules.Compile(path, file, asked)
	if unreachable != nil {
		return nil, nil, fmt.Errorf("%w to resolve the rules' resources: %w", ErrUnreachable, unreachable)
	}
	if err != nil {
		return nil, nil, err
	}
	if schemas != nil {
		if err := rules.TypeCheck(path, file, set, schemas); err != nil {
			return nil, nil, err
		}
	}
	if err := set.ExcludeNamespaces(exclude); err != nil {
		return nil, nil, fmt.Errorf("excluded namespaces: %w", err)
	}
	return set, unresolved, nil
}
