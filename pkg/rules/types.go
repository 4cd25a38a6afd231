// Package rules defines the rules file (rules.yaml): its schema, strict
// loading with errors that name the field, and compilation against resolved
// resources into what the controller enforces.
//
// The package imports no clients or informers; resolving a resource name to
// a GroupVersionResource is the caller's job (see package resolve).
package rules

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

// Rule says which annotations every object of some resources must carry.
type Rule struct {
	// Name identifies the rule in logs, metrics and errors. Unique in the file.
	Name string `json:"name"`
	// Resources are the resources the rule targets, named as kubectl names
	// them: plural, singular or short name, optionally qualified with the
	// group ("frigates.ship.nwiizo.dev") or version and group
	// ("deployments.v1.apps").
	Resources []string `json:"resources"`
	// Annotations are set on every object of those resources.
	Annotations map[string]string `json:"annotations"`
}
