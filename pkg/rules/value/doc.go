// Package value reads the values rules compute, one value form at a time:
// a JSONPath template on the object (FromTemplates), a key of the
// object's namespace (FromNamespace) and of related objects (Readers). A
// value that cannot be read, or is not valid for its key, is a Missing,
// with why and one of Reasons; Settle follows the key's default chain
// from it (ifInvalid, a default read from another form, a literal), and
// the caller (package rules) sets what it gives or leaves the key unset.
//
// It imports spec (the value forms as the file gives them), source and
// labelvalue, and nothing else of the module.
package value
