package check

import (
	"strings"

	"github.com/kube-annotator/kube-annotator/pkg/rbac"
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules/lint"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// Compile compiles file, the rules file at path, against res as run
// does, which finds the conflicts and cycles that only resolved names
// show, and returns its warnings in the order found: label values that
// may be invalid (lint.InvalidLabelValues); offline, the names res does
// not know (Unresolved), which do not fail the check as a cluster may
// serve them, and the sensitive resources the rules target. An error is
// the file's (*rulefile.Error) or, matching resolve.ErrUnreachable, the
// cluster's: it could not be asked.
func Compile(path string, file *rulefile.File, res *resolve.Resolver, offline bool) ([]rulefile.FieldError, error) {
	_, unresolved, err := resolve.Compile(path, file, res.Resolve, res.Schema, nil)
	if err != nil {
		return nil, err
	}
	warnings := lint.InvalidLabelValues(file)
	if offline {
		warnings = append(warnings, Unresolved(unresolved)...)
		warnings = append(warnings, rbac.Sensitive(file, Resolved(file, res.Resolve))...)
	}
	return warnings, nil
}

// Unresolved words each of unresolved, the names offline resolution does
// not know, with what not knowing it costs: a resource's rules are not
// checked against those that name it otherwise, a fromRef key is not set,
// an owner ends the walk.
func Unresolved(unresolved []rulefile.FieldError) []rulefile.FieldError {
	for i, u := range unresolved {
		why := "; an owner of it ends the walk"
		switch {
		case strings.Contains(u.Field, ".resources["):
			why = "; its rules are not checked against rules that name it in other ways"
		case strings.Contains(u.Field, ".fromRef."):
			why = "; the key is not set, or gets its default"
		}
		unresolved[i].Message += why
	}
	return unresolved
}
