package tenants

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// Merge returns the file of admin's rules followed by the rules in force
// of results, in their order: the admin's first, so that on a key both
// want of one object the admin's rule wins (file order decides).
func Merge(admin *spec.File, results []Result) *spec.File {
	merged := *admin
	merged.Rules = slices.Clip(admin.Rules)
	for _, r := range results {
		if r.Err == nil {
			merged.Rules = append(merged.Rules, r.Rules...)
		}
	}
	return &merged
}

// Compose merges the rules in force of results into admin's file, which
// compile must accept alone. When the merged file does not compile, each
// tenant's rules are compiled with admin's alone: a tenant whose rules do
// not compile with them has none in force, its Err saying why at the
// lines of its own file. One tenant's rules never cost another's.
func Compose(admin *spec.File, results []Result, compile func(*spec.File) error) *spec.File {
	merged := Merge(admin, results)
	if len(merged.Rules) == len(admin.Rules) || compile(merged) == nil {
		return merged
	}
	for i := range results {
		r := &results[i]
		if r.Err != nil || len(r.Rules) == 0 {
			continue
		}
		if err := compile(Merge(admin, []Result{*r})); err != nil {
			r.Err = r.blame(err, len(admin.Rules))
		}
	}
	return Merge(admin, results)
}

// blame rewrites err, an error of compiling r's rules after the main
// file's first ones, to name the fields and lines of r's file.
func (r *Result) blame(err error, first int) error {
	var fe *spec.Error
	if !errors.As(err, &fe) {
		return fmt.Errorf("%s: its rules do not compile with the main file's: %w", r.Name(), err)
	}
	out := &spec.Error{File: r.Name() + " (with the main rules file)"}
	for _, f := range fe.Fields {
		n, rest, ok := ruleIndex(f.Field)
		if ok && n >= first && n-first < len(r.Indexes) {
			f.Field = fmt.Sprintf("rules[%d]%s", r.Indexes[n-first], rest)
			f.Line = r.file.Line(f.Field)
		} else if ok {
			f.Field = "main file's " + f.Field
		}
		f.Message = r.renumber(f.Message, first)
		out.Fields = append(out.Fields, f)
	}
	return out
}

// ruleRef is a rule named by its index in a message: "rules[3]".
var ruleRef = regexp.MustCompile(`rules\[(\d+)\]`)

// renumber rewrites the rules msg names by their index in the merged file
// as the tenant's file or the main file names them.
func (r *Result) renumber(msg string, first int) string {
	return ruleRef.ReplaceAllStringFunc(msg, func(ref string) string {
		n, _, _ := ruleIndex(ref)
		if n >= first && n-first < len(r.Indexes) {
			return fmt.Sprintf("rules[%d]", r.Indexes[n-first])
		}
		return "the main file's " + ref
	})
}

// ruleIndex splits "rules[3].labels.team" into 3 and ".labels.team".
func ruleIndex(field string) (int, string, bool) {
	rest, ok := strings.CutPrefix(field, "rules[")
	if !ok {
		return 0, "", false
	}
	num, rest, ok := strings.Cut(rest, "]")
	n, err := strconv.Atoi(num)
	return n, rest, ok && err == nil
}
