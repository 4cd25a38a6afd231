package cli

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rbac"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// warnSensitive writes to w, as warnings about the rules file at path,
// sensitiveProblems.
func warnSensitive(w io.Writer, path string, file *rulefile.File, resolved map[string]schema.GroupResource) {
	warn(w, path, rbac.Sensitive(file, resolved))
}

// warn writes each problem to w as a warning about the rules file at
// path, at its line when known, as errors are written.
func warn(w io.Writer, path string, problems []rulefile.FieldError) {
	for _, p := range problems {
		fmt.Fprintf(w, "warning: %s\n", (&rulefile.Error{File: path, Fields: []rulefile.FieldError{p}}).Error())
	}
}
