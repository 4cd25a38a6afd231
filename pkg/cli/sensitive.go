package cli

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/sensitive"
)

// sensitiveProblem is the warning about resource j of rule i, which the
// rule names as written and which is s.
func sensitiveProblem(i, j int, rule, written string, s sensitive.Resource) rules.FieldError {
	target := written
	if canonical := s.GroupResource.String(); canonical != written {
		target = fmt.Sprintf("%s (%s)", written, canonical)
	}
	return rules.FieldError{Field: fmt.Sprintf("rules[%d].resources[%d]", i, j), Message: fmt.Sprintf(
		"rule %q targets %s: the ClusterRole that the rbac command generates grants get, list, watch and patch on all of them, cluster-wide, so the controller's service account can %s",
		rule, target, s.Can)}
}

// sensitiveProblems are warnings about every resource of file's rules
// that is sensitive. resolved maps names as written to the group and
// resource they stand for on the cluster; a name it lacks is classified as
// written.
func sensitiveProblems(file *rules.File, resolved map[string]schema.GroupResource) []rules.FieldError {
	var out []rules.FieldError
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

// warnSensitive writes to w, as warnings about the rules file at path,
// sensitiveProblems.
func warnSensitive(w io.Writer, path string, file *rules.File, resolved map[string]schema.GroupResource) {
	warn(w, path, sensitiveProblems(file, resolved))
}

// warn writes each problem to w as a warning about the rules file at path.
func warn(w io.Writer, path string, problems []rules.FieldError) {
	for _, p := range problems {
		fmt.Fprintf(w, "warning: %s: %s\n", path, p)
	}
}
