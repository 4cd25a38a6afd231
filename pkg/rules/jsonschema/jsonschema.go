package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Schema is a JSON Schema (draft 2020-12), with the keywords the rules
// file's format needs; each field is the keyword its
// tag names.
type Schema struct {
	Schema        string             `json:"$schema,omitempty"`
	Title         string             `json:"title,omitempty"`
	Description   string             `json:"description,omitempty"`
	Ref           string             `json:"$ref,omitempty"`
	Type          string             `json:"type,omitempty"`
	Enum          []string           `json:"enum,omitempty"`
	Default       any                `json:"default,omitempty"`
	Pattern       string             `json:"pattern,omitempty"`
	MinLength     int                `json:"minLength,omitempty"`
	MaxLength     int                `json:"maxLength,omitempty"`
	Items         *Schema            `json:"items,omitempty"`
	MinItems      int                `json:"minItems,omitempty"`
	UniqueItems   bool               `json:"uniqueItems,omitempty"`
	Properties    map[string]*Schema `json:"properties,omitempty"`
	Required      []string           `json:"required,omitempty"`
	MinProperties int                `json:"minProperties,omitempty"`
	PropertyNames *Schema            `json:"propertyNames,omitempty"`
	// AdditionalProperties is closed, the schema false, for a mapping of
	// known fields.
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	AllOf                []*Schema          `json:"allOf,omitempty"`
	AnyOf                []*Schema          `json:"anyOf,omitempty"`
	OneOf                []*Schema          `json:"oneOf,omitempty"`
	Not                  *Schema            `json:"not,omitempty"`
	Defs                 map[string]*Schema `json:"$defs,omitempty"`

	// never makes this the schema false, which no value matches.
	never bool
}

// Closed is the schema false: as additionalProperties, no field but those
// listed.
var Closed = &Schema{never: true}

// MarshalJSON writes s, or false for closed.
func (s Schema) MarshalJSON() ([]byte, error) {
	if s.never {
		return []byte("false"), nil
	}
	type plain Schema // without this method
	return json.Marshal(plain(s))
}

// Dialect is the draft the schemas follow, for the root's $schema.
const Dialect = "https://json-schema.org/draft/2020-12/schema"

// Ref refers to the $def name.
func Ref(name string) *Schema { return &Schema{Ref: "#/$defs/" + name} }

// Encode returns s as indented JSON ending in a newline, with no HTML
// escapes.
func (s *Schema) Encode() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		panic(fmt.Sprintf("encode a JSON Schema: %v", err)) // strings, ints and bools always encode
	}
	return buf.Bytes()
}

// Formats k8s.io/apimachinery's validation checks, as JSON Schema
// patterns; TestJSONSchemaPatterns keeps each in agreement with its check.
const (
	// DNSLabelPattern is validation.IsDNS1123Label's format.
	DNSLabelPattern   = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	DNSLabelMaxLength = validation.DNS1123LabelMaxLength
	// LabelValuePattern is validation.IsValidLabelValue's format.
	LabelValuePattern = `^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	// QualifiedNameMaxLength bounds the name part of a qualified name, as
	// validation.IsQualifiedName does.
	QualifiedNameMaxLength = 63
)

// QualifiedNamePattern is validation.IsQualifiedName's format; anyCase
// admits upper case letters in the prefix, which annotation keys may have
// since they are checked lowercased.
func QualifiedNamePattern(anyCase bool) string {
	alnum := "a-z0-9"
	if anyCase {
		alnum = "a-zA-Z0-9"
	}
	label := "[" + alnum + "]([-" + alnum + "]*[" + alnum + "])?"
	return `^(` + label + `(\.` + label + `)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
}

// MarkerPattern matches the annotation keys patch.IsMarker reserves for
// domain, in any case. JSON Schema patterns have no case-insensitive flag that every
// editor's engine reads, so each letter is a class of both cases.
func MarkerPattern(domain string) string {
	var b strings.Builder
	b.WriteString(`^[^/]*\.`)
	for _, r := range domain {
		if unicode.IsLetter(r) {
			fmt.Fprintf(&b, "[%c%c]", unicode.ToLower(r), unicode.ToUpper(r))
		} else {
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("/")
	return b.String()
}

// MetadataKey is the key of what ("an annotation", "a label") as the
// rules file's decoder checks it: a qualified name (checked lowercased,
// for an annotation), and for an annotation no key reserved for the
// markers of markerDomain.
func MetadataKey(what string, annotation bool, markerDomain string) *Schema {
	s := &Schema{Type: "string",
		Description: "The key of " + what + ": a name of at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit, " +
			"optionally after a DNS subdomain prefix and '/' (example.com/team).",
		AllOf: []*Schema{
			{Pattern: QualifiedNamePattern(annotation)},
			{Pattern: fmt.Sprintf(`^([^/]{1,%d}/)?[^/]{1,%d}$`, validation.DNS1123SubdomainMaxLength, QualifiedNameMaxLength)},
		}}
	if annotation {
		s.Not = &Schema{Pattern: MarkerPattern(markerDomain),
			Description: "Keys *." + markerDomain + "/* are reserved: kube-annotator's admission policies record in them the keys they set."}
	}
	return s
}
