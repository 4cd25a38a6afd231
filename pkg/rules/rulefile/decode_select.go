package rulefile

import (
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/jsonpath"

	"github.com/kube-annotator/kube-annotator/pkg/glob"
)

// globs decodes a list of globs in path.Match syntax.
func (d *decoder) globs(n *yaml.Node, p string) []string {
	return d.List(n, p, "names or globs", "must not be empty; leave the field out to select everything", func(item *yaml.Node, ip, s string) bool {
		if s == "" {
			d.Errorf(item, ip, "must not be empty")
			return false
		}
		if err := glob.Check(s); err != nil {
			d.Errorf(item, ip, "invalid glob %q: %v", s, err)
			return false
		}
		return true
	})
}

// selector decodes a label selector in kubectl syntax.
func (d *decoder) selector(n *yaml.Node, p string) string {
	s, ok := d.Str(n, p)
	if !ok {
		return ""
	}
	if s == "" {
		d.Errorf(n, p, "must not be empty; leave the field out to select everything")
		return ""
	}
	if _, err := labels.Parse(s); err != nil {
		d.Errorf(n, p, "invalid label selector %q: %v", s, err)
		return ""
	}
	return s
}

// jsonPathValue decodes the template of {jsonPath: '{...}'}, a value read
// from the object.
func (d *decoder) jsonPathValue(v *yaml.Node, fp string) (string, bool) {
	s, isStr := d.Str(v, fp)
	if !isStr {
		return "", false
	}
	if err := jsonpath.New(fp).Parse(s); err != nil || !strings.Contains(s, "{") {
		d.Errorf(v, fp, "invalid JSONPath template %q: write it as kubectl does, e.g. '{.metadata.labels.team}'%s", s, errSuffix(err))
		return "", false
	}
	if why := selfReferential(s); why != "" {
		d.Errorf(v, fp, "JSONPath template %q reads %s, which every write changes, so the value would never settle; read a field, e.g. '{.metadata.labels.team}'", s, why)
		return "", false
	}
	return s, true
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}

// selfReferentialPath matches expressions that read what the controller
// writes, or what changes with every write.
var selfReferentialPath = regexp.MustCompile(`^(\.?|@|\.metadata|\.metadata\.(annotations|labels))$|^\.metadata\.(managedFields|resourceVersion)\b|\.\.`)

// selfReferential returns what a template reads that a write would change,
// or "".
func selfReferential(tmpl string) string {
	for _, m := range regexp.MustCompile(`\{([^}]*)\}`).FindAllStringSubmatch(tmpl, -1) {
		expr := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(m[1]), "range "))
		expr = strings.TrimPrefix(expr, "$")
		if expr == "end" {
			continue
		}
		if selfReferentialPath.MatchString(expr) {
			if expr == "" || expr == "." || expr == "@" {
				return "the whole object"
			}
			return expr
		}
	}
	return ""
}
