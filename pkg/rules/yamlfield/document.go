package yamlfield

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// Document decodes data, the text of a YAML file of at most max bytes
// that holds one document, whose top level is what, into its root node;
// or returns the line (0 for none) and the message of why it is not one:
// too large, UTF-16, binary, empty, not YAML, or more than one document.
func Document(data []byte, max int, what string) (root *yaml.Node, line int, msg string) {
	switch {
	case len(data) > max:
		return nil, 0, fmt.Sprintf("file is larger than %d bytes", max)
	case bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) ||
		len(data) > 1 && (data[0] == 0) != (data[1] == 0):
		return nil, 0, "file is UTF-16 text; save it as UTF-8"
	case bytes.IndexByte(data, 0) >= 0:
		return nil, 0, "file contains a NUL byte; a rules file is YAML text"
	case len(bytes.TrimSpace(data)) == 0:
		return nil, 0, "file is empty; expected " + what
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	root = &yaml.Node{}
	if err := dec.Decode(root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, 0, "file is empty; expected " + what
		}
		line, msg := yamlMessage(err)
		return nil, line, "invalid YAML: " + msg
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, extra.Line, "more than one YAML document; a rules file is one document"
	} else if !errors.Is(err, io.EOF) {
		line, msg := yamlMessage(err)
		return nil, line, "invalid YAML: " + msg
	}
	return root, 0, ""
}

// Problems returns the *spec.Error of the file name with errs, sorted by
// line and at most MaxErrors of them, saying so when there were more or
// capped is set (decoding stopped early).
func Problems(name string, errs []spec.FieldError, capped bool) *spec.Error {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	if capped || len(errs) > MaxErrors {
		errs = append(errs[:min(len(errs), MaxErrors)], spec.FieldError{Message: fmt.Sprintf("stopped after %d problems", MaxErrors)})
	}
	return &spec.Error{File: name, Fields: errs}
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
