package rulefile

import (
	"github.com/kube-annotator/kube-annotator/pkg/rules/yamlfield"

	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
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
	fail := func(line int, field, format string, args ...any) error {
		return &Error{File: name, Fields: []FieldError{{Line: line, Field: field, Message: fmt.Sprintf(format, args...)}}}
	}
	if len(data) > MaxFileSize {
		return nil, fail(0, "", "file is larger than %d bytes", MaxFileSize)
	}
	if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) ||
		len(data) > 1 && (data[0] == 0) != (data[1] == 0) {
		return nil, fail(0, "", "file is UTF-16 text; save it as UTF-8")
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, fail(0, "", "file contains a NUL byte; a rules file is YAML text")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fail(0, "", `file is empty; expected a top-level "rules" list`)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fail(0, "", `file is empty; expected a top-level "rules" list`)
		}
		line, msg := yamlMessage(err)
		return nil, fail(line, "", "invalid YAML: %s", msg)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fail(extra.Line, "", "more than one YAML document; a rules file is one document")
	} else if !errors.Is(err, io.EOF) {
		line, msg := yamlMessage(err)
		return nil, fail(line, "", "invalid YAML: %s", msg)
	}

	d := &decoder{}
	file := d.file(&root)
	if len(d.Errs) > 0 {
		return nil, Problems(name, d.Errs, d.Capped)
	}
	return file, nil
}

// Problems returns the *Error of the file name with errs, sorted by line
// and at most yamlfield.MaxErrors of them, saying so when there were more or
// capped is set (decoding stopped early).
func Problems(name string, errs []FieldError, capped bool) *Error {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	if capped || len(errs) > yamlfield.MaxErrors {
		errs = append(errs[:min(len(errs), yamlfield.MaxErrors)], FieldError{Message: fmt.Sprintf("stopped after %d problems", yamlfield.MaxErrors)})
	}
	return &Error{File: name, Fields: errs}
}

// yamlLine matches the position the YAML parser puts in its messages.
var yamlLine = regexp.MustCompile(`^(?:\[)?line (\d+):(?:\])? ?`)

// yamlMessage splits the parser's error into a line (0 when it names none)
// and the message without its "yaml: " prefix.
func yamlMessage(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return line, msg[len(m[0]):]
	}
	return 0, msg
}
