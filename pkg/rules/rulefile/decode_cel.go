package rulefile

import (
	"github.com/google/cel-go/common/types"
	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
)

// when decodes a rule's when condition: a CEL expression yielding a bool.
func (d *decoder) when(v *yaml.Node, p string) string {
	src, reads, ok := d.cel(v, p, types.BoolType, "condition")
	if reads {
		d.Errorf(v, p, "%s: a condition is evaluated by the controller too, which never knows the request; "+
			"request may be read only in a recorded value (once: true)", celexpr.Request)
		return ""
	}
	if !ok {
		return ""
	}
	return src
}

// celValue decodes the expression of {cel: "…"}: a CEL expression
// yielding a string. An expression that reads the admission request is
// noted in into, for valueForm to check that the value is recorded.
func (d *decoder) celValue(v *yaml.Node, p, key string, into *metadataValues) (string, bool) {
	src, reads, ok := d.cel(v, p, types.StringType, "value")
	if ok && reads {
		into.readsRequest = v
	}
	return src, ok
}

// requestRecorded reports a value of key, read from the admission request
// (the expression at n), that is not recorded: the request is known when
// the object is admitted only, so the value must be kept as it was then.
func (d *decoder) requestRecorded(n *yaml.Node, p, key string, into *metadataValues) {
	if n == nil || into.Once[key] {
		return
	}
	d.Errorf(n, p, "reads %s, which is known when the object is admitted only: add once: true to record it then "+
		"(objects admitted without the rule's policy get the default)", celexpr.Request)
	delete(into.CEL, key)
}

// cel decodes a CEL expression found at p that must yield want, and
// reports at v's line why it does not compile, or what it reads that
// every write changes; reads says whether it reads the admission request.
func (d *decoder) cel(v *yaml.Node, p string, want *types.Type, what string) (src string, reads, ok bool) {
	d.LineOf(p, v)
	src, ok = d.Str(v, p)
	if !ok {
		return "", false, false
	}
	if src == "" {
		d.Errorf(v, p, "must be a CEL expression, got an empty string")
		return "", false, false
	}
	e, err := celexpr.Compile(src, want)
	if err != nil {
		d.Errorf(v, p, "invalid CEL %s %q: %v", what, src, err)
		return "", false, false
	}
	if why := e.Volatile(); why != "" {
		d.Errorf(v, p, "CEL %s %q reads %s, which every write changes, so it would never settle; "+
			"read fields by name, e.g. object.metadata.labels.team", what, src, why)
		return "", false, false
	}
	if len(e.OwnerReads) > 0 && d.readsOwner == nil {
		d.readsOwner = v
	}
	return src, e.ReadsRequest, true
}
