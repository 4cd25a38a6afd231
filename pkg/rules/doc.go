// Package rules loads the rules file (rules.yaml), compiles it against
// resolved resources, and says what the rules want of one object. It is
// the front of the packages below it: the file format (spec, read by
// rulefile, yamlfield and jsonschema), the checks of rules together
// (lint), CEL (celexpr), the objects rules read besides the object
// (source), which objects a rule selects (selection), the reading of
// values (value), ifInvalid (labelvalue) and explain's model (verdict).
//
// A field of the file takes one path through the packages:
//
//   - Load and Parse (parse.go) read the file: rulefile.Parse decodes it
//     into a rulefile.File of Rules, checking each field against the
//     schema, which rulefile states once in its decoder's tables; then
//     the rules are checked together (pkg/rules/lint): what a selector
//     or a when condition reads of what rules write must settle.
//   - Compile (compile.go) resolves each rule's resources through a
//     ResolveFunc and groups the Compiled rules into a Set of Targets, one
//     per resource; conflicts between rules are reported there, and
//     TypeCheck (typecheck.go) checks their CEL against the resources'
//     schemas.
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
// Layer "rules" of deps_test.go: of this module it imports only patch and
// the packages below it, and no client or informer (of client-go,
// util packages only); resolving a name to a GroupVersionResource is the
// caller's job (package resolve).
package rules
