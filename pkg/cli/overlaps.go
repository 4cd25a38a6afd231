package cli

import (
	"fmt"
	"io"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// warnOverlaps prints, as warnings, the pairs of rules in file (loaded from
// path) that may select the same objects and want different values for one
// key. They are not errors: file order decides where they meet.
func warnOverlaps(w io.Writer, path string, file *rules.File) {
	for _, o := range rules.Overlaps(file) {
		fmt.Fprintf(w, "warning: %s: %s\n", path, o)
	}
}
