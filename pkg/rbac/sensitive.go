package rbac

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/sensitive"
)

// sensitiveProblem is the warning about resource j of rule i, which the
// rule names as written and which is s.
func sensitiveProblem(i, j int, rule, written string, s sensitive.Resource) rulefile.FieldError {
	target := written
	if canonical := s.GroupResource.String(); canonical != written {
		target = fmt.Sprintf("%s (%s)", written, canonical)
	}
	return rulefile.FieldError{Field: fmt.Sprintf("rules[%d].resources[%d]", i, j), Message: fmt.Sprintf(
		"rule %q targets %s: the ClusterRole that the rbac command generates grants get, list, watch and patch on all of them, cluster-wide, so the controller's service account can %s",
		rule, target, s.Can)}
}

// Sensitive are warnings about every resource of file's rules that is
// sensitive (package sensitive): the ClusterRole Generate makes grants
// access to all of its objects. resolved maps names as written to the
// group and resource they stand for on the cluster; a name it lacks is
// classified as written.
func Sensitive(file *rulefile.File, resolved map[string]schema.GroupResource) []rulefile.FieldError {
	var out []rulefile.FieldError
	for i, rule := range file.Rules {
		for j, name := range rule.Resources {
			s, ok := sensitive.ByName(name)
			if gr, known := resolved[name]; known {
				s, ok = sensitive.ByGroupResource(gr)
			}
			if ok {
				out = append(out, sensitiveProblem(i, j, rule.Name, name, s))
			}
		}
	}
	return out
}
