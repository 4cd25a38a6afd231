package check

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// Report is check's answer as -o json and -o yaml print it; docs/cli.md
// documents its fields, which scripts may rely on.
type Report struct {
	// File is the rules file, as --rules names it.
	File string `json:"file"`
	// Valid says that the file loaded: no problem is an error.
	Valid bool `json:"valid"`
	// Rules counts the file's rules; 0 when it is not valid.
	Rules int `json:"rules"`
	// Problems are what is wrong with the file (errors) or may be
	// (warnings), in the order they were found; never null.
	Problems []Problem `json:"problems"`
	// Resources are the verdicts on each resource of each rule on the
	// cluster; absent with --offline and when the file is not valid.
	Resources []Verdict `json:"resources,omitempty"`
	// Tenant is the tenant's namespace when the file is a tenant's
	// (Tenant.Check); Status is then the text the controller writes on
	// its ConfigMap: how many of its rules are in force, and why the
	// others are not.
	Tenant string `json:"tenant,omitempty"`
	Status string `json:"status,omitempty"`
	// OK is what the exit status says: the file is valid, no problem is
	// an error and every resource is served and allowed.
	OK bool `json:"ok"`

	// rows are the verdicts as the text table prints them.
	rows []Row
	// lead are what the text of a tenant's file says before its status.
	lead []string
}

// Problem is one problem of a rules file.
type Problem struct {
	// Severity is error or warning.
	Severity string `json:"severity"`
	// Path is the field, e.g. rules[1].resources[0]; "" for the file.
	Path string `json:"path"`
	// Line is the 1-based line of the field; absent when unknown.
	Line int `json:"line,omitempty"`
	// Message says what is wrong.
	Message string `json:"message"`
}

// Verdict is the verdict on one resource of one rule.
type Verdict struct {
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

// Severities of a Problem.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// NewReport returns the report on the rules file at path, with no
// problem yet.
func NewReport(path string) *Report {
	return &Report{File: path, Problems: []Problem{}}
}

// Add adds problems of severity to r.
func (r *Report) Add(severity string, problems []rulefile.FieldError) {
	for _, p := range problems {
		r.Problems = append(r.Problems, Problem{Severity: severity, Path: p.Field, Line: p.Line, Message: p.Message})
	}
}

// AddRows adds the verdicts on the cluster's resources to r.
func (r *Report) AddRows(rows []Row) {
	r.rows, r.Resources = rows, []Verdict{}
	for _, row := range rows {
		res := Verdict{Rule: row.rule, Resource: row.resource, Status: row.status, Denied: row.denied}
		if row.gr.Resource != "" {
			res.ServedAs = row.servedAs
		}
		if len(row.denied) > 0 {
			res.Status = "forbidden"
		}
		r.Resources = append(r.Resources, res)
	}
}

// Conclude sets r's OK, which the exit status says, and returns it: the
// file is valid, no problem is an error (a tenant's rule refused) and
// every resource is served and allowed.
func (r *Report) Conclude() bool {
	r.OK = r.Valid && !slices.ContainsFunc(r.Problems, func(p Problem) bool { return p.Severity == SeverityError })
	for _, res := range r.Resources {
		r.OK = r.OK && res.Status == "ok"
	}
	return r.OK
}

// PrintText writes r as text: for a tenant's file, its status; offline,
// the file's verdict; else the table of the verdicts on the cluster's
// resources.
func (r *Report) PrintText(w io.Writer, offline bool) error {
	if r.Tenant != "" {
		lines := slices.DeleteFunc(append(slices.Clone(r.lead), r.Status), func(s string) bool { return s == "" })
		_, err := fmt.Fprintln(w, strings.Join(lines, "\n"))
		return err
	}
	if !offline {
		return printRows(w, r.rows)
	}
	plural := "s"
	if r.Rules == 1 {
		plural = ""
	}
	_, err := fmt.Fprintf(w, "%s: valid (%d rule%s)\n", r.File, r.Rules, plural)
	return err
}
