// Package rules defines the rules file (rules.yaml): its schema, strict
// loading with errors that name the field, and compilation against resolved
// resources into what the controller enforces.
//
// The package imports no clients or informers; resolving a resource name to
// a GroupVersionResource is the caller's job (see package resolve).
package rules

import "reflect"

// Version is the only schema version this build understands. A rules file
// may state it in its top-level "version" field; when absent it is assumed.
const Version = "v1"

// MaxFileSize is the largest rules file Load accepts. A rules file is a
// handful of rules; anything bigger is a mistake (or an attack on the
// parser), so it is refused before parsing.
const MaxFileSize = 1 << 20

// File is a parsed, validated rules file.
type File struct {
	// Version is the schema version, "v1".
	Version string `json:"version,omitempty"`
	// Rules are applied in file order.
	Rules []Rule `json:"rules"`
}

// Rule says which metadata the objects it selects must carry. Selection
// fields are optional and combine with AND; a rule without them selects
// every object of its resources. Each rule sets or removes at least one key.
type Rule struct {
	// Name identifies the rule in logs, metrics and errors. Unique in the file.
	Name string `json:"name"`
	// Resources are the resources the rule targets, named as kubectl names
	// them: plural, singular or short name, optionally qualified with the
	// group ("frigates.ship.nwiizo.dev") or version and group
	// ("deployments.v1.apps").
	Resources []string `json:"resources"`

	// Namespaces selects objects in namespaces matching any of these globs
	// (path.Match syntax: *, ?, [a-z]). For the namespaces resource itself,
	// a Namespace's own name is matched.
	Namespaces []string `json:"namespaces,omitempty"`
	// ExcludeNamespaces leaves out objects in namespaces matching any glob.
	ExcludeNamespaces []string `json:"excludeNamespaces,omitempty"`
	// NamespaceSelector selects objects whose namespace's labels match this
	// label selector, in kubectl syntax ("team=a,env in (prod)").
	NamespaceSelector string `json:"namespaceSelector,omitempty"`
	// Selector selects objects whose labels match this label selector.
	Selector string `json:"selector,omitempty"`
	// Names selects objects whose name matches any of these globs.
	Names []string `json:"names,omitempty"`

	// Annotations are set, to these literal values.
	Annotations map[string]string `json:"annotations,omitempty"`
	// AnnotationsFrom are set to a value read from the object with a
	// kubectl JSONPath template, written {jsonPath: '{.spec.foo}'}.
	AnnotationsFrom map[string]string `json:"annotationsFrom,omitempty"`
	// Labels are set, to these literal values.
	Labels map[string]string `json:"labels,omitempty"`
	// LabelsFrom are set to a value read from the object, as AnnotationsFrom.
	LabelsFrom map[string]string `json:"labelsFrom,omitempty"`
	// RemoveAnnotations are deleted, whoever set them.
	RemoveAnnotations []string `json:"removeAnnotations,omitempty"`
	// RemoveLabels are deleted, whoever set them.
	RemoveLabels []string `json:"removeLabels,omitempty"`
}

// Selective reports whether the rule selects only some objects of its
// resources.
func (r *Rule) Selective() bool {
	return len(r.Namespaces) > 0 || len(r.ExcludeNamespaces) > 0 || r.NamespaceSelector != "" ||
		r.Selector != "" || len(r.Names) > 0
}

// equalRule reports whether two rules are the same.
func equalRule(a, b *Rule) bool { return reflect.DeepEqual(a, b) }
