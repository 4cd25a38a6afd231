package rulefile

import "github.com/kube-annotator/kube-annotator/pkg/rules/spec"

// The rules file's types are package spec's: this package reads them from
// YAML. The names below let readers of a file name them as its parts.
type (
	File         = spec.File
	Rule         = spec.Rule
	Metadata     = spec.Metadata
	NamespaceKey = spec.NamespaceKey
	RelatedKey   = spec.RelatedKey
	Owners       = spec.Owners
	KeySet       = spec.KeySet
	Refs         = spec.Refs
	FieldError   = spec.FieldError
	Error        = spec.Error
)

// Constants of the file format: see package spec.
const (
	Version          = spec.Version
	MaxFileSize      = spec.MaxFileSize
	MaxRules         = spec.MaxRules
	AnnotationKind   = spec.AnnotationKind
	LabelKind        = spec.LabelKind
	DataKind         = spec.DataKind
	ModeEnforce      = spec.ModeEnforce
	ModeAudit        = spec.ModeAudit
	IgnoreAnnotation = spec.IgnoreAnnotation
)

// FieldPath is the path of key in the mapping at path, as spec.FieldPath.
func FieldPath(path, key string) string { return spec.FieldPath(path, key) }
