package rulefile

import (
	"slices"
	"strings"

	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
	yaml "go.yaml.in/yaml/v3"
)

// onceField is the field that, next to a computed value form, records the
// value: it is written where the key is absent and then kept.
const onceField = "once"

// once decodes v, the once given at path p next to form, the value form
// of key.
func (d *decoder) once(v *yaml.Node, p, key, form string, into *metadataValues) {
	if !d.Boolean(v, p) {
		return
	}
	switch {
	case !slices.Contains(computedFormNames, form):
		d.Errorf(v, p, "a %s never changes, so it takes no once; once records a computed value: %s", form, strings.Join(computedFormNames, ", "))
	case into.IfAbsent[key]:
		d.Errorf(v, p, "once sets the key only where it is absent already, and keeps it; give once or ifAbsent, not both")
	default:
		into.Once = spec.Put(into.Once, key, true)
	}
}

// onceSchema is the JSON Schema of once, next to a computed value form.
func onceSchema() *jsonSchema {
	return &jsonSchema{Type: "boolean",
		Description: "true records the value: it is written where the key is absent, and then kept as it was, whatever its source becomes."}
}
