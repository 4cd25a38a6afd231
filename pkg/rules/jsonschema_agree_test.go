package rules_test

import (
	"errors"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

// decoderOnly are the malformed files of testdata/bad that the JSON Schema
// accepts, each with the decoder's check it cannot state; docs/rules.md
// ("Editor support") lists them. Every other file that is a YAML document
// the schema must refuse, as the decoder does.
var decoderOnly = map[string]string{
	"annotation-key-boolean.yaml":                "keys are strings: JSON has no other keys",
	"annotation-key-number.yaml":                 "keys are strings: JSON has no other keys",
	"annotation-value-binary-tag.yaml":           "no YAML tags: the schema sees the tagged value as a string",
	"annotation-value-custom-tag.yaml":           "no YAML tags: the schema sees the tagged value as a string",
	"annotations-over-256kib-via-aliases.yaml":   "annotations within the API server's 256 KiB",
	"duplicate-annotation-key.yaml":              "no duplicate keys: JSON reads the last",
	"duplicate-rule-key.yaml":                    "no duplicate keys: JSON reads the last",
	"duplicate-top-level-key.yaml":               "no duplicate keys: JSON reads the last",
	"duplicate-version-key.yaml":                 "no duplicate keys: JSON reads the last",
	"fromref-configmap-field-without-names.yaml": "in fromRef, names: next to a ConfigMap's field:",
	"duplicate-rule-names.yaml":                  "rule names unique in the file",
	"duplicate-rule-via-alias.yaml":              "rule names unique in the file",
	"second-document-empty.yaml":                 "one YAML document: the schema validates each alone",
	"second-document.yaml":                       "one YAML document: the schema validates each alone",
	"syntax-second-document-invalid.yaml":        "one YAML document: the schema validates each alone",
	"unquoted-date.yaml":                         "timestamps quoted: YAML 1.2, as editors read it, has no timestamp type",
	"unquoted-timestamp.yaml":                    "timestamps quoted: YAML 1.2, as editors read it, has no timestamp type",
	"utf16-encoded.yaml":                         "UTF-8 text: the schema sees decoded text",
}

// Every malformed file of the corpus that is a YAML document fails the
// JSON Schema, read as either draft, but those whose problem only the
// decoder can see, which it accepts.
func TestJSONSchemaCorpusBad(t *testing.T) {
	for name, draft := range drafts {
		t.Run("draft "+name, func(t *testing.T) { checkCorpusBad(t, compileSchemaAs(t, draft, "")) })
	}
}

func checkCorpusBad(t *testing.T, s *jsonschema.Schema) {
	paths, err := filepath.Glob(filepath.Join("testdata", "bad", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	listed := maps.Clone(decoderOnly)
	refused, notInstance := 0, 0
	for _, p := range paths {
		name := filepath.Base(p)
		why, only := decoderOnly[name]
		delete(listed, name)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		err = validateYAML(t, s, data)
		switch {
		case errors.Is(err, errNotInstance):
			notInstance++ // not YAML, or an alias bomb: nothing for a schema to validate
			if only {
				t.Errorf("%s: listed as decoder-only (%s), but it is no YAML document: %v", name, why, err)
			}
		case err == nil && !only:
			t.Errorf("%s: the decoder refuses it but the JSON Schema accepts it; make the schema say it, or list it in decoderOnly", name)
		case err != nil && only:
			t.Errorf("%s: listed as decoder-only (%s), but the JSON Schema refuses it too: %v", name, why, err)
		case err != nil:
			refused++
		}
	}
	for name := range listed {
		t.Errorf("decoderOnly lists %s, which is not in testdata/bad", name)
	}
	t.Logf("JSON Schema: refuses %d files, accepts %d decoder-only ones; %d are not YAML documents", refused, len(decoderOnly), notInstance)
}

// The schema's patterns for names, keys and values agree with the
// validation functions the decoder calls, on boundary cases and on
// generated strings.
func TestJSONSchemaFormats(t *testing.T) {
	ok := func(msgs []string) bool { return len(msgs) == 0 }
	for _, tc := range []struct {
		location string
		want     func(string) bool
	}{
		{"#/$defs/rule/properties/name", func(s string) bool { return ok(validation.IsDNS1123Label(s)) }},
		{"#/$defs/rule/properties/resources/items", func(s string) bool { return s != "" && !strings.ContainsAny(s, " \t\n/,") }},
		{"#/$defs/labelKey", func(s string) bool { return ok(validation.IsQualifiedName(s)) }},
		{"#/$defs/annotationKey", func(s string) bool {
			return ok(validation.IsQualifiedName(strings.ToLower(s))) && !patch.IsMarker(s)
		}},
		{"#/$defs/labelLiteral", func(s string) bool { return ok(validation.IsValidLabelValue(s)) }},
		{"#/$defs/fromRef/properties/name", func(s string) bool { return ok(validation.IsDNS1123Subdomain(s)) }},
		{"#/$defs/fromRef/properties/names/items", func(s string) bool { return ok(validation.IsDNS1123Subdomain(s)) }},
		{"#/$defs/fromRef/properties/data", func(s string) bool { return ok(validation.IsConfigMapKey(s)) }},
	} {
		t.Run(tc.location, func(t *testing.T) {
			s := compileSchema(t, tc.location)
			accepted := 0
			for _, sample := range formatSamples() {
				got := s.Validate(sample) == nil
				if got != tc.want(sample) {
					t.Errorf("%q: JSON Schema accepts it: %v; the decoder: %v", sample, got, !got)
				}
				if got {
					accepted++
				}
			}
			if accepted == 0 {
				t.Error("the schema accepts no sample")
			}
		})
	}
}

// formatSamples are strings at the edges of Kubernetes' name formats, and
// short strings of the characters that matter to them.
func formatSamples() []string {
	samples := []string{
		"", "a", "A", "0", "-", "_", ".", "/", "a b", "a\tb", "a\nb", "a\rb", "a,b", "é", "team", "Team",
		"example.com/team", "Example.COM/team", "example.com/Team", "my_company.com/team", "a..b/c", "a.-b/c",
		".a/b", "a./b", "-a/b", "a-/b", "/a", "a/", "a/b/c", "a_b", "a.b", "a-b", "-a", "a-", "_a", "a_",
		"frigates.ship.nwiizo.dev", "deployments.v1.apps", "apps/deployments",
		"pods.admission.kube-annotator.io/x", "Pods.ADMISSION.Kube-Annotator.IO/x", "admission.kube-annotator.io/x",
		"x.admission.kube-annotator.io", "x.admission.kube-annotator.iox/y", "..", "..a", "a..", "a.b-c", "a.-b",
	}
	for _, n := range []int{1, 62, 63, 64, 252, 253, 254} {
		samples = append(samples, strings.Repeat("a", n), strings.Repeat("a", n)+"/b")
		for _, m := range []int{62, 63, 64} {
			samples = append(samples, strings.Repeat("a", n)+"/"+strings.Repeat("b", m), "a/"+strings.Repeat("b", m-2)+"-c")
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aZ9-_./ "
	for range 3000 {
		b := make([]byte, 1+r.IntN(7))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		samples = append(samples, string(b))
	}
	slices.Sort(samples)
	return slices.Compact(samples)
}

// FuzzParse's property, on every file the decoder accepts: so does the
// JSON Schema. (checkSchemaAccepts is called from FuzzParse.)
func checkSchemaAccepts(t *testing.T, data []byte) {
	t.Helper()
	if err := validateYAML(t, compileSchema(t, ""), data); err != nil && !errors.Is(err, errNotInstance) {
		t.Errorf("the decoder accepts the file, the JSON Schema does not: %#v", err)
	}
}
