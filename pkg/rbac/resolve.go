package rbac

import (
	"fmt"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Problem is a resource name of a rules file that did not resolve, or
// resolved with a warning, as Resolve says it.
type Problem struct {
	// Message names the file, the rule and the name: "rules.yaml:
	// rules[0].resources[1]: …".
	Message string
	// Warning is set when the name is only not granted; otherwise no
	// RBAC can be generated for the file.
	Warning bool
}

// ResolveFunc resolves a resource name as a rules file writes it: the
// resource, and a warning when it is taken as written (a custom resource
// not served yet).
type ResolveFunc func(name string) (res source.Resource, warning string, err error)

// Resolve resolves, each once, the resource names the rules of file
// (loaded from path) need granted: the resources they name, and the owner
// and referred-to resources they read. A rule's resource that does not
// resolve is a Problem; an owner or referred-to resource that does not is
// a warning and is not granted, as the controller ends a walk at such an
// owner and sets no key read from it.
func Resolve(path string, file *rulefile.File, resolve ResolveFunc) (map[string]source.Resource, []Problem) {
	resolved := map[string]source.Resource{}
	var problems []Problem
	for i, rule := range withTenants(file).Rules {
		for j, name := range rule.Resources {
			field := fmt.Sprintf("rules[%d].resources[%d]", i, j)
			if i == len(file.Rules) { // the tenants' stand-in
				field = fmt.Sprintf("tenants.resources[%d]", j)
			}
			res, warning, err := resolve(name)
			if err != nil {
				problems = append(problems, Problem{Message: fmt.Sprintf("%s: %s: %v", path, field, err)})
				continue
			}
			if warning != "" {
				problems = append(problems, Problem{Message: fmt.Sprintf("%s: %s: %s", path, field, warning), Warning: true})
			}
			resolved[name] = res
		}
		for _, name := range append(rule.OwnerResources(), rule.RefResources()...) {
			if _, done := resolved[name]; done {
				continue
			}
			if res, _, err := resolve(name); err != nil {
				problems = append(problems, Problem{Message: fmt.Sprintf("%s: rules[%d]: resource %q, read by fromOwner or fromRef: %v; not granted", path, i, name, err), Warning: true})
			} else {
				resolved[name] = res
			}
		}
	}
	return resolved, problems
}
