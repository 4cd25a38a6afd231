package spec

import (
	"fmt"
	"strings"
)

// FieldError is one problem in a rules file, located by field path and,
// when known, by line.
type FieldError struct {
	// Line is the 1-based line in the file, or 0 when unknown.
	Line int
	// Field is the path to the offending field, e.g. "rules[1].annotations.team".
	Field string
	// Message says what is wrong and, where possible, how to fix it.
	Message string
}

func (e FieldError) String() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Error reports every problem found in one rules file, so that a user can
// fix them all at once.
type Error struct {
	// File is the rules file's path as the user gave it.
	File string
	// Fields are the problems, in file order.
	Fields []FieldError
}

// Error formats one line per problem: "file:line: field: message".
func (e *Error) Error() string {
	var b strings.Builder
	for i, f := range e.Fields {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.File)
		if f.Line > 0 {
			fmt.Fprintf(&b, ":%d", f.Line)
		}
		b.WriteString(": ")
		b.WriteString(f.String())
	}
	return b.String()
}
