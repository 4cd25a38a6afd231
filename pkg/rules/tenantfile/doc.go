// Package tenantfile decodes the tenants section of the main rules file
// into a spec.Tenants: the limits within which tenants may write rules of
// their own (package tenants checks a tenant's file against them). Start
// at Decode; Schema is the section's JSON Schema.
//
// Layer "rules" of deps_test.go: it imports spec, yamlfield, jsonschema
// and glob; package rulefile imports it to decode the section.
package tenantfile
