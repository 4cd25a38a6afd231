// Package spec holds what a rules file says, as Go types: a File of
// Rules, each Rule's selection fields and, per kind of metadata, its
// Metadata — the keys it sets by value form, removes and copies (KeySet),
// with the keys of related objects it reads (NamespaceKey, RelatedKey,
// Owners, Refs) — and the FieldError and Error that report a file's
// problems at their lines. Package rulefile decodes a file into them and
// names them for its readers; package rules compiles and evaluates them.
//
// Start at File and Rule (types.go). It imports, of this module, only the
// table of sources (pkg/rules/source) and globs (pkg/glob).
package spec
