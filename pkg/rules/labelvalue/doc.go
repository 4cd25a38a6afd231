// Package labelvalue makes a value read or computed for a label a valid
// label value, as a rule's ifInvalid option asks: truncate, sanitize or
// hash. A label value holds at most 63 letters, digits, '-', '_' and '.',
// and starts and ends with a letter or digit (or is empty); an annotation
// value has no such limit, so nothing here applies to one.
//
// A reader starts at MakeValid (labelvalue.go): a pure function from a
// value and a mode to the valid value, and how it was made so, which
// explain shows. The modes are listed once, in Modes, for the decoder,
// the JSON Schema and the docs.
//
// Layer "base" of deps_test.go: it imports nothing of kube-annotator.
package labelvalue
