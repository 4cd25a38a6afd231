// Package celexpr compiles and evaluates the CEL expressions of rules —
// when conditions and {cel: …} values — in the API server's environment
// for stored expressions, with the variables object, namespaceObject and
// request as admission policies give them. The controller never knows
// request: an expression that reads it (Expr.ReadsRequest) is evaluated
// by admission policies only.
//
// A reader starts at Compile (expr.go), which type-checks an expression
// and records the fields of the object and of its namespace it reads
// (Expr.Reads, Expr.NamespaceReads). From those follow what a cache must
// keep for it (metadata.go: MetadataOnly, MetadataFields), what it is
// given to read (eval.go: Input) and the key of its memo: Expr.EvalOn
// keeps each result by the values it read (memo.go), so that objects
// alike cost one evaluation. ObjectDeclType (schema.go) types object from
// a resource's OpenAPI schema, for type-checking offline and online.
//
// Layer "rules" of deps_test.go: it imports only pkg/rules/source of this
// module, and no client; the rules (pkg/rules) use it.
package celexpr
