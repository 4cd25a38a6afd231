// Package rules defines the rules file (rules.yaml): its schema, strict
// loading with errors that name the file, line and field, compilation
// against resolved resources, and what the rules want of one object.
//
// A field of the file takes one path through the package:
//
//   - Load (load.go) reads the file and Parse decodes it into a File of
//     Rules. The schema is stated once, in the decoder's tables fileSchema
//     and ruleSchema (schema.go): each entry names a field as written,
//     checks its value and fills fields of File or Rule, which carry no
//     encoding tags; JSONSchema generates docs/rules.schema.json from the
//     same tables, and a test holds tables, structs and docs together.
//   - Compile (compile.go) resolves each rule's resources through a
//     ResolveFunc and groups the Compiled rules into a Set of Targets, one
//     per resource; conflicts between rules are reported there.
//   - Target.Evaluate (compile.go) returns the Evaluation of one object:
//     what the rules selecting it want of its annotations and labels.
//     Target.Explain (explain.go) says why, rule by rule.
//
// Rules read objects besides the object itself through one table, that
// of package source (pkg/rules/source): the Namespace (source.Namespace:
// namespace selectors, fromNamespace) and a Pod's Node (source.Node:
// fromNode) are two entries of it, that are only data. The decoder, the
// JSON Schema, the caches' projection and the controller's watches follow
// from the table. The objects themselves are read through a
// source.Lookup passed to each evaluation: the controller answers from
// its informers, the commands from a list made once; no compiled value
// calls back up.
//
// Layer "rules" of deps_test.go: it imports only patch of this module and
// no client or informer (of client-go, util packages only); resolving a
// name to a GroupVersionResource is the caller's job (package resolve).
package rules
