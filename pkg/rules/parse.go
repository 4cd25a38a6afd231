package rules

import (
	"github.com/kube-annotator/kube-annotator/pkg/rules/lint"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// Load reads, parses and validates the rules file at path.
// Every problem is reported in one *rulefile.Error.
func Load(path string) (*rulefile.File, error) {
	data, err := rulefile.Read(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses and validates a rules file's content; name is used in
// errors. The file format checks each field (rulefile.Parse); then the
// rules are checked together: a selector or when condition that reads
// what a rule writes must settle (lint.Unsettled).
func Parse(name string, data []byte) (*rulefile.File, error) {
	f, err := rulefile.Parse(name, data)
	if err != nil {
		return nil, err
	}
	if err := lint.Settled(name, f); err != nil {
		return nil, err
	}
	return f, nil
}
