package rules

import (
	"github.com/kube-annotator/kube-annotator/pkg/rules/lint"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// TypeCheck type-checks each CEL expression of the rules of set against
// the schema of every resource the rule targets (lint.TypeCheck); set was
// compiled from f, loaded from name, so that it checks each resource as
// discovery resolved the names the rules give.
func TypeCheck(name string, f *rulefile.File, set *Set, schemas lint.SchemaFunc) error {
	var targets []lint.Targeted
	for _, t := range set.SortedTargets() {
		targets = append(targets, lint.Targeted{Resource: t.Resource, Rules: t.ruleIndexes()})
	}
	return lint.TypeCheck(name, f, targets, schemas)
}
