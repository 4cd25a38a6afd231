package tenantfile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kube-annotator/kube-annotator/pkg/glob"
	"github.com/kube-annotator/kube-annotator/pkg/rules/jsonschema"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
	"github.com/kube-annotator/kube-annotator/pkg/rules/yamlfield"
)

// Field is the section's key at the top of the main rules file.
const Field = "tenants"

// ValueForms are the value forms a section may let tenants use.
var ValueForms = []string{"value", "jsonPath", "cel", "fromNamespace", "fromOwner", "fromNode", "fromRef", "copy"}

// Upper bounds of the section's limits: what one tenant may be allowed at
// most.
const (
	MaxKeys       = 1_000
	MaxValueBytes = 256 << 10
	// MaxWritesPerSecond and MaxChanges bound writesPerSecond and
	// maxChanges.
	MaxWritesPerSecond = 10_000
	MaxChanges         = 10_000_000
)

// fields are the section's fields, in the order the docs list them.
var fields = []string{"configMap", "configMapSelector", "key", "namespaceSelector", "resources", "keys",
	"maxRules", "maxKeys", "maxValueBytes", "valueForms", "writesPerSecond", "maxChanges"}

// Decode decodes the tenants section n, found at path, reporting its
// problems to d. It fills in the defaults of the fields left out.
func Decode(d *yamlfield.Decoder, n *yaml.Node, path string) *spec.Tenants {
	d.LineOf(path, n)
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "must be a mapping with resources: and keys:, got %s", yamlfield.Describe(n))
		return nil
	}
	t := &spec.Tenants{}
	seen := d.Fields(n, path, fields, func(k, p string, v *yaml.Node) {
		switch k {
		case "configMap":
			t.ConfigMap = name(d, v, p, "ConfigMap name", validation.IsDNS1123Subdomain)
		case "configMapSelector":
			t.ConfigMapSelector = selector(d, v, p)
		case "key":
			t.Key = name(d, v, p, "ConfigMap key", validation.IsConfigMapKey)
		case "namespaceSelector":
			t.NamespaceSelector = selector(d, v, p)
		case "resources":
			t.Resources = resources(d, v, p)
		case "keys":
			t.Labels, t.Annotations = keys(d, v, p)
		case "maxRules":
			t.MaxRules = bound(d, v, p, spec.MaxRules)
		case "maxKeys":
			t.MaxKeys = bound(d, v, p, MaxKeys)
		case "maxValueBytes":
			t.MaxValueBytes = bound(d, v, p, MaxValueBytes)
		case "writesPerSecond":
			t.WritesPerSecond = bound(d, v, p, MaxWritesPerSecond)
		case "maxChanges":
			t.MaxChanges = bound(d, v, p, MaxChanges)
		case "valueForms":
			t.ValueForms = d.UniqueList(v, p, "value forms", "must name at least one value form", "value form", func(it *yaml.Node, ip, s string) bool {
				if !slices.Contains(ValueForms, s) {
					d.Errorf(it, ip, "unknown value form %q%s; known ones are %s", s, yamlfield.Suggest(s, ValueForms), strings.Join(ValueForms, ", "))
					return false
				}
				return true
			})
		}
	})
	for _, req := range []string{"resources", "keys"} {
		if !seen[req] {
			d.Errorf(n, path, "missing required field %q", req)
		}
	}
	if seen["configMap"] && seen["configMapSelector"] {
		d.Errorf(n, spec.FieldPath(path, "configMapSelector"), "give configMap or configMapSelector, not both")
	}
	complete(t, seen)
	return t
}

// complete fills in the defaults of the fields not seen.
func complete(t *spec.Tenants, seen map[string]bool) {
	if !seen["configMap"] && !seen["configMapSelector"] {
		t.ConfigMap = spec.DefaultTenantConfigMap
	}
	if !seen["key"] {
		t.Key = spec.DefaultTenantKey
	}
	if !seen["maxRules"] {
		t.MaxRules = spec.DefaultTenantMaxRules
	}
	if !seen["maxKeys"] {
		t.MaxKeys = spec.DefaultTenantMaxKeys
	}
	if !seen["maxValueBytes"] {
		t.MaxValueBytes = spec.DefaultTenantMaxValueBytes
	}
	if !seen["writesPerSecond"] {
		t.WritesPerSecond = spec.DefaultTenantWritesPerSecond
	}
	if !seen["valueForms"] {
		t.ValueForms = slices.Clone(spec.DefaultTenantValueForms)
	}
}

// name decodes a name that valid says is valid (a list of problems), of
// what ("ConfigMap name").
func name(d *yamlfield.Decoder, v *yaml.Node, p, what string, valid func(string) []string) string {
	s, ok := d.Str(v, p)
	if !ok {
		return ""
	}
	if errs := valid(s); len(errs) > 0 {
		d.Errorf(v, p, "invalid %s %q: %s", what, s, strings.Join(errs, "; "))
		return ""
	}
	return s
}

func selector(d *yamlfield.Decoder, v *yaml.Node, p string) string {
	s, ok := d.Str(v, p)
	if !ok {
		return ""
	}
	if _, err := labels.Parse(s); err != nil || s == "" {
		d.Errorf(v, p, "invalid label selector %q: %v", s, err)
		return ""
	}
	return s
}

// IsSecrets reports whether the resource name, as written, names Secrets:
// tenant rules never may, whatever the section says.
func IsSecrets(res string) bool {
	first, rest, _ := strings.Cut(res, ".")
	return (first == "secrets" || first == "secret") && (rest == "" || rest == "v1")
}

func resources(d *yamlfield.Decoder, v *yaml.Node, p string) []string {
	return d.UniqueList(v, p, "resource names", "must name at least one resource tenant rules may write", "resource", func(it *yaml.Node, ip, s string) bool {
		switch {
		case s == "" || strings.ContainsAny(s, " \t\n/,*"):
			d.Errorf(it, ip, "invalid resource %q: name one resource as kubectl does, e.g. pods or deployments.apps", s)
		case IsSecrets(s):
			d.Errorf(it, ip, "tenant rules may never write Secrets")
		default:
			return true
		}
		return false
	})
}

// keys decodes {labels: [GLOB, …], annotations: [GLOB, …]}.
func keys(d *yamlfield.Decoder, v *yaml.Node, p string) (lbls, annotations []string) {
	if v.Kind != yaml.MappingNode {
		d.Errorf(v, p, "must be a mapping with labels: and annotations:, lists of key globs, got %s", yamlfield.Describe(v))
		return nil, nil
	}
	d.Fields(v, p, []string{spec.LabelKind + "s", spec.AnnotationKind + "s"}, func(k, kp string, kv *yaml.Node) {
		globs := d.UniqueList(kv, kp, "key globs", "must allow at least one key glob; leave the field out to allow none", "key glob", func(it *yaml.Node, ip, s string) bool {
			if err := glob.Check(strings.ReplaceAll(s, "/", "")); err != nil || s == "" {
				d.Errorf(it, ip, "invalid key glob %q: %v", s, err)
				return false
			}
			return true
		})
		if k == spec.LabelKind+"s" {
			lbls = globs
		} else {
			annotations = globs
		}
	})
	if len(lbls) == 0 && len(annotations) == 0 {
		d.Errorf(v, p, "must allow at least one label or annotation key glob")
	}
	return lbls, annotations
}

// bound decodes a positive integer no greater than most.
func bound(d *yamlfield.Decoder, v *yaml.Node, p string, most int) int {
	n, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || err != nil || n < 1 || n > most {
		d.Errorf(v, p, "must be a whole number from 1 to %d, got %s", most, yamlfield.Describe(v))
		return 0
	}
	return n
}

// Schema is the JSON Schema of the section.
func Schema() *jsonschema.Schema {
	str := func(desc string) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "string", MinLength: 1, Description: desc}
	}
	globs := &jsonschema.Schema{Type: "array", MinItems: 1, UniqueItems: true, Items: &jsonschema.Schema{Type: "string", MinLength: 1}}
	num := func(desc string) *jsonschema.Schema { return &jsonschema.Schema{Type: "integer", Description: desc} }
	return &jsonschema.Schema{
		Type:        "object",
		Description: "Lets tenants write rules of their own in a ConfigMap of their namespace, within these limits.",
		Required:    []string{"resources", "keys"},
		Properties: map[string]*jsonschema.Schema{
			"configMap":         str(fmt.Sprintf("Name of the ConfigMap holding a tenant's rules (default %s).", spec.DefaultTenantConfigMap)),
			"configMapSelector": str("Label selector of the ConfigMaps holding tenants' rules, instead of configMap."),
			"key":               str(fmt.Sprintf("Key of the ConfigMap's data holding the rules file (default %s).", spec.DefaultTenantKey)),
			"namespaceSelector": str("Label selector of the namespaces whose tenants may write rules (default: every namespace)."),
			"resources": {Type: "array", MinItems: 1, UniqueItems: true, Description: "Resources tenant rules may name, as they must name them; never Secrets.",
				Items: &jsonschema.Schema{Type: "string", MinLength: 1}},
			"keys": {Type: "object", MinProperties: 1, AdditionalProperties: jsonschema.Closed,
				Description: "Globs of the label and annotation keys tenant rules may set or remove.",
				Properties:  map[string]*jsonschema.Schema{"labels": globs, "annotations": globs}},
			"maxRules":        num(fmt.Sprintf("Most rules in a tenant's file (default %d).", spec.DefaultTenantMaxRules)),
			"maxKeys":         num(fmt.Sprintf("Most keys a tenant's rules set or remove in all (default %d).", spec.DefaultTenantMaxKeys)),
			"maxValueBytes":   num(fmt.Sprintf("Longest value a tenant's rule gives literally (default %d).", spec.DefaultTenantMaxValueBytes)),
			"writesPerSecond": num(fmt.Sprintf("Objects a tenant's rules may have changed per second, in a burst of as many (default %d).", spec.DefaultTenantWritesPerSecond)),
			"maxChanges":      num("Holds a tenant's new rules file that would change more objects in its namespace until the tenant confirms it (default: none held)."),
			"valueForms": {Type: "array", MinItems: 1, UniqueItems: true, Items: &jsonschema.Schema{Type: "string", Enum: ValueForms},
				Description: fmt.Sprintf("Value forms tenant rules may use (default %s).", strings.Join(spec.DefaultTenantValueForms, ", "))},
		},
		AdditionalProperties: jsonschema.Closed,
	}
}
