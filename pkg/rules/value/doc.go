// Package value reads the values rules compute, one value form at a time:
// a JSONPath template on the object (FromTemplates) and a key of the
// object's namespace (FromNamespace). A value that cannot be read, or is
// not valid for its key, is a Missing, with why and one of Reasons; the
// caller (package rules) sets its default or leaves the key unset.
//
// It imports rulefile (the value forms as the file gives them) and
// nothing else of the module.
package value
