// Package jsonschema writes JSON Schemas (draft 2020-12, in the keywords
// that mean the same in draft 7): the Schema type, and the patterns of the
// names and values Kubernetes validates. Package rulefile builds the rules
// file's schema with it, from its decoder's tables.
package jsonschema
