package rulefile

import (
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"

	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/jsonschema"
	"github.com/kube-annotator/kube-annotator/pkg/rules/tenantfile"
)

// field is one field of a mapping in the rules file, as the decoder reads
// it into a T (File or Rule).
type field[T any] struct {
	// name is the field's key in the file.
	name string
	// fills names the fields of T that decode stores the value in; a
	// field of a struct field is named by both, "Labels.From".
	fills []string
	// required fields must be present.
	required bool
	// sets marks the fields that set or remove keys; a rule gives at least one.
	sets bool
	// decode checks the value v, found at path, and stores it in into.
	decode func(d *decoder, into *T, v *yaml.Node, path string)
	// doc describes the field to someone writing a rules file: the
	// description editors show from the JSON Schema.
	doc string
	// value is the JSON Schema of the values decode accepts, as far as a
	// JSON Schema can say it (see JSONSchema).
	value *jsonSchema
}

// mapping is the fields of a YAML mapping, in the order the docs list them.
type mapping[T any] []field[T]

// fileSchema is the top level of a rules file.
var fileSchema = mapping[File]{
	{name: "version", fills: []string{"Version"},
		doc:   "Schema version of the file; optional. The only version is v1.",
		value: &jsonSchema{Type: "string", Enum: []string{Version}},
		decode: func(d *decoder, f *File, v *yaml.Node, p string) {
			s, ok := d.Str(v, p)
			switch {
			case !ok:
			case s != Version:
				d.Errorf(v, p, "unsupported version %q; this build reads %q", s, Version)
			default:
				f.Version = s
			}
		}},
	{name: "rules", fills: []string{"Rules"}, required: true,
		doc:    "The rules, applied in file order. An empty list means no rule: the controller then deletes every key it set.",
		value:  &jsonSchema{Type: "array", Items: ref(defRule)},
		decode: func(d *decoder, f *File, v *yaml.Node, p string) { f.Rules = d.rules(v, p) }},
	{name: tenantfile.Field, fills: []string{"Tenants"},
		doc:    "Lets tenants write rules of their own, in a ConfigMap of their namespace, within these limits (docs/tenants.md).",
		value:  tenantfile.Schema(),
		decode: func(d *decoder, f *File, v *yaml.Node, p string) { f.Tenants = tenantfile.Decode(&d.Decoder, v, p) }},
}

// ruleSchema is one rule.
var ruleSchema = mapping[Rule]{
	{name: "name", fills: []string{"Name"}, required: true,
		doc:    "Unique name of the rule, used in logs, metrics and errors: a DNS label (lowercase letters, digits and '-').",
		value:  &jsonSchema{Type: "string", Pattern: jsonschema.DNSLabelPattern, MaxLength: jsonschema.DNSLabelMaxLength},
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { r.Name = d.ruleName(v, p) }},
	{name: "resources", fills: []string{"Resources"}, required: true,
		doc: "Resources the rule targets, named as kubectl names them: plural (deployments), singular, short name (deploy), " +
			"resource.group (frigates.ship.nwiizo.dev) or resource.version.group (deployments.v1.apps).",
		value:  &jsonSchema{Type: "array", MinItems: 1, UniqueItems: true, Items: &jsonSchema{Type: "string", Pattern: resourcePattern}},
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { r.Resources = d.resources(v, p) }},
	{name: "namespaces", fills: []string{"Namespaces"},
		doc:    "Selects objects in namespaces matching any of these globs (*, ?, [a-z]); for the namespaces resource, a Namespace's own name.",
		value:  globsSchema(),
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { r.Namespaces = d.globs(v, p) }},
	{name: "excludeNamespaces", fills: []string{"ExcludeNamespaces"},
		doc:    "Leaves out objects in namespaces matching any of these globs.",
		value:  globsSchema(),
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { r.ExcludeNamespaces = d.globs(v, p) }},
	{name: "namespaceSelector", fills: []string{"NamespaceSelector"},
		doc:   "Selects objects whose namespace's labels match this label selector, in kubectl syntax (team=a,env in (prod)).",
		value: selectorSchema(),
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) {
			r.NamespaceSelector = d.selector(v, p)
			d.LineOf(p, v)
		}},
	{name: "selector", fills: []string{"Selector"},
		doc:    "Selects objects whose labels match this label selector, in kubectl syntax (app=web,tier!=cache).",
		value:  selectorSchema(),
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { r.Selector = d.selector(v, p); d.LineOf(p, v) }},
	{name: "names", fills: []string{"Names"},
		doc:    "Selects objects whose name matches any of these globs.",
		value:  globsSchema(),
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { r.Names = d.globs(v, p) }},
	{name: "when", fills: []string{"When"},
		doc: "Selects objects for which this CEL expression, as in admission policies, yields true. It reads object " +
			"and namespaceObject (the object's Namespace; null for a cluster-scoped object), e.g. object.spec.replicas > 2.",
		value:  &jsonSchema{Type: "string", MinLength: 1},
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { r.When = d.when(v, p); d.LineOf(p, v) }},
	{name: "mode", fills: []string{"Mode"},
		doc:    "enforce (the default) writes what the rule wants; audit only reports what it would change, in logs, metrics and events.",
		value:  &jsonSchema{Type: "string", Enum: spec.Modes, Default: ModeEnforce},
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { r.Mode = d.mode(v, p) }},
	{name: "allowOptOut", fills: []string{"OptOutLocked"},
		doc: "true (the default) lets an object, or its namespace, opt out of the rule with the annotation " + IgnoreAnnotation +
			": \"true\"; false applies the rule to them too.",
		value:  &jsonSchema{Type: "boolean", Default: true},
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { r.OptOutLocked = !d.Boolean(v, p) }},
	{name: "locked", fills: []string{"Locked"},
		doc: "true locks the keys the rule sets and removes: only the controller's ServiceAccount (kube-annotator/kube-annotator) and " +
			"cluster admins may set, change or remove them on its resources, which the ValidatingAdmissionPolicies `kube-annotator admission` " +
			"prints enforce; {users: […], groups: […]} names who may instead.",
		value:  lockSchema(),
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { r.Locked = d.locked(v, p) }},
	{name: "podTemplates", fills: []string{"PodTemplates"},
		doc: "true, on a rule for pods, also sets at admission its keys in the pod templates of the Deployments, StatefulSets, DaemonSets, " +
			"ReplicaSets, Jobs and CronJobs created, read from the template as from the Pod, so that their Pods start with them; " +
			"only at creation: the controller never writes a template, which would roll the workload out.",
		value:  &jsonSchema{Type: "boolean", Default: false},
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { r.PodTemplates = d.Boolean(v, p); d.LineOf(p, v) }},
	{name: "ownerObject", fills: []string{"OwnerObject"},
		doc: "Which controller owner CEL's ownerObject is, for a rule whose expressions read it: walked through the owner resources " +
			"in through (by default " + strings.Join(source.DefaultOwners, ", ") + "), the root of that chain, or the first object " +
			"of the resource owner names. The owner's cache keeps the fields the expressions read.",
		value:  ownerWalkSchema(),
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { r.OwnerObject = d.ownerWalk(v, p) }},
	{name: "annotations", fills: metadataFills(AnnotationKind, "Values", "From", "CEL", "FromNamespace", "FromRelated", "IfAbsent", "Default", "Fallback", "Once"), sets: true,
		doc:    "Annotations to set; a key's value is " + valueFormsHow + ".",
		value:  metadataSchema(AnnotationKind),
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { d.metadata(v, p, AnnotationKind, &r.Annotations) }},
	{name: "labels", fills: metadataFills(LabelKind, "Values", "From", "CEL", "FromNamespace", "FromRelated", "IfAbsent", "Default", "Fallback", "IfInvalid", "Once"), sets: true,
		doc:    "Labels to set; a key's value is " + valueFormsHow + ".",
		value:  metadataSchema(LabelKind),
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { d.metadata(v, p, LabelKind, &r.Labels) }},
	{name: "removeAnnotations", fills: metadataFills(AnnotationKind, "Remove"), sets: true,
		doc:    "Annotation keys to delete, whoever set them.",
		value:  keysSchema(AnnotationKind),
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { r.Annotations.Remove = d.keys(v, p, AnnotationKind) }},
	{name: "removeLabels", fills: metadataFills(LabelKind, "Remove"), sets: true,
		doc:    "Label keys to delete, whoever set them.",
		value:  keysSchema(LabelKind),
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { r.Labels.Remove = d.keys(v, p, LabelKind) }},
	{name: "copy", fills: []string{"Annotations.Copy", "Labels.Copy"}, sets: true,
		doc: "Key sets to copy from related objects, each {fromNamespace|fromNode|fromOwner: {labels: [GLOB, …]}} (or annotations:), " +
			"with except: [GLOB, …]: every key that matches (* matches '/' too), under the same name, following the object as it changes. " +
			"A key the rule sets otherwise, or removes, is not copied; a copied key never replaces a value another field manager set.",
		value:  copySchema(),
		decode: func(d *decoder, r *Rule, v *yaml.Node, p string) { d.copyItems(v, p, r) }},
}

// metadataFills names the fields of the Metadata of kind in a Rule, as a
// field's fills: "Labels.From".
func metadataFills(kind string, fields ...string) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = kindField[kind] + "." + f
	}
	return out
}

// kindField is the field of a Rule that holds the Metadata of each kind.
var kindField = map[string]string{AnnotationKind: "Annotations", LabelKind: "Labels"}

// setters lists, for errors, the fields of a rule that set or remove keys:
// "a, b or c".
var setters = func() string {
	var names []string
	for _, f := range ruleSchema {
		if f.sets {
			names = append(names, f.name)
		}
	}
	last := len(names) - 1
	return strings.Join(names[:last], ", ") + " or " + names[last]
}()

// names returns the fields' keys, in order.
func (s mapping[T]) names() []string {
	names := make([]string, len(s))
	for i, f := range s {
		names[i] = f.name
	}
	return names
}

// decode decodes mapping n, found at path, into into, reporting unknown,
// duplicate and missing fields. It returns the keys seen.
func (s mapping[T]) decode(d *decoder, n *yaml.Node, path string, into *T) map[string]bool {
	seen := d.Fields(n, path, s.names(), func(key, p string, v *yaml.Node) {
		i := slices.IndexFunc(s, func(f field[T]) bool { return f.name == key })
		s[i].decode(d, into, v, p)
	})
	for _, f := range s {
		if f.required && !seen[f.name] {
			d.Errorf(n, FieldPath(path, f.name), "required field is missing")
		}
	}
	return seen
}

// setsSome reports whether seen holds a field that sets or removes keys.
func (s mapping[T]) setsSome(seen map[string]bool) bool {
	return slices.ContainsFunc(s, func(f field[T]) bool { return f.sets && seen[f.name] })
}
