package cli

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// sensitiveWarning is the warning about resource j of rule i in the rules
// file at path, which the rule names as written and which is s.
func sensitiveWarning(path string, i, j int, rule, written string, s rules.Sensitive) string {
	target := written
	if canonical := s.GroupResource.String(); canonical != written {
		target = fmt.Sprintf("%s (%s)", written, canonical)
	}
	return fmt.Sprintf("warning: %s: rules[%d].resources[%d]: rule %q targets %s: the ClusterRole that the rbac command generates grants get, list, watch and patch on all of them, cluster-wide, so the controller's service account can %s",
		path, i, j, rule, target, s.Can)
}

// warnSensitive writes to w a warning for every resource of file's rules
// that is sensitive. resolved maps names as written to the group and
// resource they stand for on the cluster; a name it lacks is classified as
// written.
func warnSensitive(w io.Writer, path string, file *rules.File, resolved map[string]schema.GroupResource) {
	for i, rule := range file.Rules {
		for j, name := range rule.Resources {
			s, ok := rules.SensitiveName(name)
			if gr, known := resolved[name]; known {
				s, ok = rules.SensitiveGroupResource(gr)
			}
			if ok {
				fmt.Fprintln(w, sensitiveWarning(path, i, j, rule.Name, name, s))
			}
		}
	}
}
