package cli

import (
	"fmt"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// checkReport is check's answer as -o json and -o yaml print it; docs/cli.md
// documents its fields, which scripts may rely on.
type checkReport struct {
	// File is the rules file, as --rules names it.
	File string `json:"file"`
	// Valid says that the file loaded: no problem is an error.
	Valid bool `json:"valid"`
	// Rules counts the file's rules; 0 when it is not valid.
	Rules int `json:"rules"`
	// Problems are what is wrong with the file (errors) or may be
	// (warnings), in the order they were found; never null.
	Problems []checkProblem `json:"problems"`
	// Resources are the verdicts on each resource of each rule on the
	// cluster; absent with --offline and when the file is not valid.
	Resources []checkVerdict `json:"resources,omitempty"`
	// OK is what the exit status says: the file is valid and every
	// resource is served and allowed.
	OK bool `json:"ok"`

	// rows are the verdicts as the text table prints them.
	rows []checkRow
}

// checkProblem is one problem of a rules file.
type checkProblem struct {
	// Severity is error or warning.
	Severity string `json:"severity"`
	// Path is the field, e.g. rules[1].resources[0]; "" for the file.
	Path string `json:"path"`
	// Line is the 1-based line of the field; absent when unknown.
	Line int `json:"line,omitempty"`
	// Message says what is wrong.
	Message string `json:"message"`
}

// checkVerdict is the verdict on one resource of one rule.
type checkVerdict struct {
	Rule string `json:"rule"`
	// Resource is the resource as the rule names it.
	Resource string `json:"resource"`
	// ServedAs is resource.version.group as the cluster serves it; ""
	// when it does not.
	ServedAs string `json:"servedAs"`
	// Status is ok, not found or forbidden.
	Status string `json:"status"`
	// Denied are the verbs you may not use on it, when forbidden.
	Denied []string `json:"denied,omitempty"`
}

// Severities of a checkProblem.
const (
	severityError   = "error"
	severityWarning = "warning"
)

// addProblems adds problems of severity to r and, when r is printed as
// text, prints the warnings on e.Err as they are found, as every command
// does.
func (e *env) addProblems(r *checkReport, output, severity string, problems []rules.FieldError) {
	for _, p := range problems {
		r.Problems = append(r.Problems, checkProblem{Severity: severity, Path: p.Field, Line: p.Line, Message: p.Message})
	}
	if output == "" && severity == severityWarning {
		warn(e.Err, r.File, problems)
	}
}

// addRows adds the verdicts on the cluster's resources to r.
func (r *checkReport) addRows(rows []checkRow) {
	r.rows, r.Resources = rows, []checkVerdict{}
	for _, row := range rows {
		res := checkVerdict{Rule: row.rule, Resource: row.resource, Status: row.status, Denied: row.denied}
		if row.gr.Resource != "" {
			res.ServedAs = row.servedAs
		}
		if len(row.denied) > 0 {
			res.Status = "forbidden"
		}
		r.Resources = append(r.Resources, res)
	}
}

// printReport prints r: as output says, or as text (the file's verdict
// offline, else the table of resources); it exits 1 unless r is ok.
func (e *env) printReport(output string, r *checkReport, offline bool) error {
	r.OK = r.Valid
	for _, res := range r.Resources {
		r.OK = r.OK && res.Status == "ok"
	}
	var err error
	switch {
	case output != "":
		err = encode(e.Out, output, r)
	case offline:
		plural := "s"
		if r.Rules == 1 {
			plural = ""
		}
		_, err = fmt.Fprintf(e.Out, "%s: valid (%d rule%s)\n", r.File, r.Rules, plural)
	default:
		_, err = printChecks(e.Out, r.rows)
	}
	if err == nil && !r.OK {
		err = exitCode(1) // what is said above says what is not ok
	}
	return err
}
