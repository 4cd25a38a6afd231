// Package lint checks rules beyond each field alone: rules whose own
// writes would never settle, rules that overlap, label values that may be
// invalid, and CEL that does not type-check against the schemas of the
// resources it is evaluated on.
//
// A reader starts at Unsettled (settle.go): a rule whose selector reads a
// label that it, or a rule before it on the same resource, sets would
// select an object, write, and so stop selecting it (or the other way
// round), for ever; Cycles (settle_cycle.go) finds such loops through
// several rules, and WhenUnsettled (settle_when.go) the when conditions
// that read a key a rule on the same resource sets. rules.Parse refuses
// them; rules.Compile checks again by the resources that discovery
// resolved the names to. Overlaps (overlap.go) reports rules that name a
// resource in common and want different values of one key, and
// InvalidLabelValues (labelvalues.go) labels whose value read may be no
// valid label value, without ifInvalid; `check` warns of both. TypeCheck
// (typecheck.go) checks each CEL expression against the OpenAPI schema of
// each resource its rule targets, as resolved by the caller
// (rules.TypeCheck), with object typed as admission policies type it.
//
// Layer "rules" of deps_test.go: it imports pkg/rules/rulefile,
// pkg/rules/celexpr and pkg/rules/labelvalue, and no client; package
// rules uses it.
package lint
