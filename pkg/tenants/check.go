package tenants

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kube-annotator/kube-annotator/pkg/glob"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
	"github.com/kube-annotator/kube-annotator/pkg/rules/tenantfile"
)

// File is one tenant's rules file, as found in its namespace.
type File struct {
	// Namespace is the tenant's namespace; ConfigMap the name of the
	// ConfigMap that holds the file.
	Namespace, ConfigMap string
	// UID is the ConfigMap's: one deleted and created again is another.
	UID string
	// Data is the file; Missing is set when the ConfigMap has no such
	// key in its data.
	Data    []byte
	Missing bool
	// Confirm is the ConfigMap's ConfirmAnnotation, "" without one.
	Confirm string
}

// Name is how errors name the file: "configmap tenant-a/kube-annotator-rules".
func (f File) Name() string { return "configmap " + f.Namespace + "/" + f.ConfigMap }

// A Refusal is one thing of a tenant's file its limits refuse.
type Refusal struct {
	// Rule is the index of the rule refused in the tenant's file.
	Rule int
	// Field is its path in the file ("rules[1].labels.evil.example/x"),
	// Line its line, 0 when not known.
	Field string
	Line  int
	// Message says which limit refuses it, naming the main file's field.
	Message string
}

func (r Refusal) String() string {
	if r.Line > 0 {
		return fmt.Sprintf("line %d: %s: %s", r.Line, r.Field, r.Message)
	}
	return r.Field + ": " + r.Message
}

// Result is what one tenant's file gives within its limits.
type Result struct {
	File
	// Rules are the rules of the file in force, made the tenant's (see
	// own); Indexes their indexes in the file.
	Rules   []spec.Rule
	Indexes []int
	// Total is how many rules the file holds.
	Total int
	// Refused are the rules refused, each with every reason.
	Refused []Refusal
	// Err, when not nil, is why none of the file's rules are in force: a
	// file that cannot be read, or whose rules do not compile with the
	// main file's.
	Err error
	// Stale, when not nil, is why the file now in the ConfigMap is not
	// read: the rules are those of the file last read (see Kept).
	Stale error
	// Held, when not nil, says why the file now in the ConfigMap is not
	// in force: Rules are those in force before it (see Hold).
	Held *Held

	file *spec.File // the file read, for the lines of its fields
}

// Unread reports whether none of the file's rules were read: the
// ConfigMap lacks the key, or the file is malformed.
func (r Result) Unread() bool { return r.Err != nil && r.file == nil }

// Kept returns r, a result of the file last read, kept in force because
// the file now in the ConfigMap cannot be read, for the reason err.
func (r Result) Kept(err error) Result {
	r.Stale = err
	return r
}

// Check reads f and keeps those of its rules that limits allow, made the
// tenant's own.
func Check(limits *spec.Tenants, f File) Result {
	res := Result{File: f}
	if f.Missing {
		res.Err = fmt.Errorf("%s has no key %q in its data: put the tenant's rules file there", f.Name(), limits.Key)
		return res
	}
	file, err := rules.Parse(f.Name(), f.Data)
	if err != nil {
		res.Err = err
		return res
	}
	if file.Tenants != nil {
		res.Err = fmt.Errorf("%s: line %d: %s: only the main rules file may let tenants write rules", f.Name(), file.Line(tenantfile.Field), tenantfile.Field)
		return res
	}
	res.file, res.Total = file, len(file.Rules)
	keys := map[string]bool{}
	for i := range file.Rules {
		r := &file.Rules[i]
		c := checker{limits: limits, file: file, index: i, namespace: f.Namespace}
		c.rule(r)
		mine := ruleKeys(r)
		if len(c.refused) == 0 {
			if i >= limits.MaxRules {
				c.refuse("", "the file holds more than the %d rules tenants.maxRules allows", limits.MaxRules)
			} else if n := len(union(keys, mine)); n > limits.MaxKeys {
				c.refuse("", "its keys would make %d in the file, more than the %d tenants.maxKeys allows", n, limits.MaxKeys)
			}
		}
		if len(c.refused) > 0 {
			res.Refused = append(res.Refused, c.refused...)
			continue
		}
		maps.Copy(keys, mine)
		res.Rules = append(res.Rules, own(*r, f.Namespace))
		res.Indexes = append(res.Indexes, i)
	}
	return res
}

// union returns the keys of a and b together.
func union(a, b map[string]bool) map[string]bool {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

// Separator joins a tenant's namespace and its rule's name into the name
// of the rule in force: "tenant-a/team". No rule of the main file, a DNS
// label, has it.
const Separator = "/"

// own makes r, of the tenant of namespace, the tenant's: named after it,
// and applying to objects of its namespace only (to the Namespace itself,
// for namespaces).
func own(r spec.Rule, namespace string) spec.Rule {
	r.Name = namespace + Separator + r.Name
	r.Tenant = namespace
	r.Namespaces = []string{namespace}
	return r
}

// checker checks one rule of a tenant's file.
type checker struct {
	limits    *spec.Tenants
	file      *spec.File
	index     int
	namespace string
	refused   []Refusal
}

// refuse refuses the rule for a reason, at the field of the rule at sub
// ("labels.team"; "" for the rule).
func (c *checker) refuse(sub, format string, args ...any) {
	p := fmt.Sprintf("rules[%d]", c.index)
	if sub != "" {
		p += "." + sub
	}
	c.refused = append(c.refused, Refusal{Rule: c.index, Field: p, Line: c.file.Line(p), Message: fmt.Sprintf(format, args...)})
}

// adminFields are the fields of a rule only the main file may give, with why.
var adminFields = []struct {
	name  string
	given func(r *spec.Rule) bool
	why   string
}{
	{"namespaces", func(r *spec.Rule) bool { return len(r.Namespaces) > 0 }, "a tenant's rules apply in its namespace only"},
	{"excludeNamespaces", func(r *spec.Rule) bool { return len(r.ExcludeNamespaces) > 0 }, "a tenant's rules apply in its namespace only"},
	{"namespaceSelector", func(r *spec.Rule) bool { return r.NamespaceSelector != "" }, "a tenant's rules apply in its namespace only"},
	{"podTemplates", func(r *spec.Rule) bool { return r.PodTemplates }, "admission policies are written from the main file alone"},
	{"locked", func(r *spec.Rule) bool { return r.Locked != nil }, "admission policies are written from the main file alone"},
	{"allowOptOut", func(r *spec.Rule) bool { return r.OptOutLocked }, "only the main file's rules may apply to objects that opt out"},
}

func (c *checker) rule(r *spec.Rule) {
	for _, f := range adminFields {
		if f.given(r) {
			c.refuse(f.name, "only the main rules file may give it: %s", f.why)
		}
	}
	for j, res := range r.Resources {
		switch {
		case tenantfile.IsSecrets(res):
			c.refuse(fmt.Sprintf("resources[%d]", j), "tenant rules may never write Secrets")
		case !slices.Contains(c.limits.Resources, res):
			c.refuse(fmt.Sprintf("resources[%d]", j), "%q is not one of the resources tenants.resources allows (%s)", res, strings.Join(c.limits.Resources, ", "))
		}
	}
	if r.When != "" || r.OwnerObject != nil {
		c.form("cel", "when")
	}
	for _, kind := range []string{spec.AnnotationKind, spec.LabelKind} {
		c.metadata(kind, r.Of(kind))
	}
}

// form refuses a value form the limits do not allow, used at sub.
func (c *checker) form(name, sub string) {
	if !slices.Contains(c.limits.ValueForms, name) {
		c.refuse(sub, "the value form %s is not one tenants.valueForms allows (%s)", name, strings.Join(c.limits.ValueForms, ", "))
	}
}

// key refuses a key of kind that the limits do not let tenants set or
// remove, at sub.
func (c *checker) key(kind, key, sub string) {
	globs := c.limits.KeysOf(kind)
	if !slices.ContainsFunc(globs, func(g string) bool { return glob.MatchKey(g, key) }) {
		c.refuse(sub, "%s key %q matches none of tenants.keys.%ss (%s)", kind, key, kind, strings.Join(globs, ", "))
	}
}

func (c *checker) metadata(kind string, m *spec.Metadata) {
	field := kind + "s"
	for _, key := range slices.Sorted(maps.Keys(ruleKeysOf(m))) {
		c.key(kind, key, field+"."+key)
	}
	for _, l := range m.Levels() {
		for _, key := range slices.Sorted(maps.Keys(ruleKeysOf(l))) {
			c.value(l, key, field+"."+key)
		}
	}
	for _, key := range m.Remove {
		c.key(kind, key, "remove"+strings.ToUpper(field[:1])+field[1:])
	}
	for _, set := range m.Copy {
		sub := fmt.Sprintf("copy[%d]", set.Item)
		c.form("copy", sub)
		switch {
		case set.CEL != "":
			c.refuse(sub, "the keys a CEL key set yields are known only once it runs; tenant rules copy keys by glob")
		case set.Refs != nil && set.Refs.Field != nil:
			c.refuse(sub, crossNamespaceRef)
		}
		for _, k := range set.Keys {
			c.key(kind, k, sub)
		}
		if set.Source != nil {
			c.form(set.Source.Field, sub)
		}
	}
}

// crossNamespaceRef is why a fromRef that reads the object a field names
// is refused.
const crossNamespaceRef = "fromRef with field: may name an object of another namespace; tenant rules read one by name:"

// value refuses the value form l gives key, at sub, where the limits do
// not allow it, and a literal value too long.
func (c *checker) value(l *spec.Metadata, key, sub string) {
	if v, ok := l.Values[key]; ok {
		c.form("value", sub)
		c.length(sub, v)
	}
	if v, ok := l.Default[key]; ok {
		c.length(sub, v)
	}
	if _, ok := l.From[key]; ok {
		c.form("jsonPath", sub)
	}
	if _, ok := l.CEL[key]; ok {
		c.form("cel", sub)
	}
	if _, ok := l.FromNamespace[key]; ok {
		c.form("fromNamespace", sub)
	}
	if rk, ok := l.FromRelated[key]; ok {
		c.form(rk.Source.Field, sub)
		if rk.Refs != nil && rk.Refs.Field != nil {
			c.refuse(sub, crossNamespaceRef)
		}
	}
}

// length refuses a literal value longer than the limits allow.
func (c *checker) length(sub, v string) {
	if len(v) > c.limits.MaxValueBytes {
		c.refuse(sub, "its value is %d bytes, more than the %d tenants.maxValueBytes allows", len(v), c.limits.MaxValueBytes)
	}
}

// ruleKeys returns the keys r sets, removes or copies, as "kind/key"
// (a copied glob as such): what tenants.maxKeys counts.
func ruleKeys(r *spec.Rule) map[string]bool {
	out := map[string]bool{}
	for _, kind := range []string{spec.AnnotationKind, spec.LabelKind} {
		m := r.Of(kind)
		for k := range ruleKeysOf(m) {
			out[kind+"/"+k] = true
		}
		for _, k := range m.Remove {
			out[kind+"/"+k] = true
		}
		for _, set := range m.Copy {
			for _, k := range set.Keys {
				out[kind+"/"+k] = true
			}
		}
	}
	return out
}

// ruleKeysOf returns the keys m sets.
func ruleKeysOf(m *spec.Metadata) map[string]string {
	out := spec.KeysOf(m.Values)
	maps.Copy(out, m.Computed())
	return out
}
