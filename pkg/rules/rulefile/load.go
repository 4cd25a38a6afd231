package rulefile

import (
	"github.com/kube-annotator/kube-annotator/pkg/rules/yamlfield"

	"fmt"
	"io"
	"os"
)

// Read returns the content of the rules file at path, up to one byte
// more than MaxFileSize, which Parse refuses.
func Read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// Parse decodes a rules file's content and validates each field; name is
// used in errors. Every problem is reported in one *Error. What needs
// the rules together — that what they write settles — is checked above
// (rules.Parse).
func Parse(name string, data []byte) (*File, error) {
	root, line, msg := yamlfield.Document(data, MaxFileSize, `a top-level "rules" list`)
	if root == nil {
		return nil, &Error{File: name, Fields: []FieldError{{Line: line, Message: msg}}}
	}
	d := &decoder{}
	file := d.file(root)
	if len(d.Errs) > 0 {
		return nil, Problems(name, d.Errs, d.Capped)
	}
	return file, nil
}

// Problems is yamlfield.Problems: the *Error of the file name with errs.
func Problems(name string, errs []FieldError, capped bool) *Error {
	return yamlfield.Problems(name, errs, capped)
}
