package spec

import (
	"maps"
	"reflect"
	"slices"
)

// Version is the only schema version this build understands. A rules file
// may state it in its top-level "version" field; when absent it is assumed.
const Version = "v1"

// MaxFileSize is the largest rules file Load accepts. A rules file is a
// handful of rules; anything bigger is a mistake (or an attack on the
// parser), so it is refused before parsing.
const MaxFileSize = 1 << 20

// File is a parsed, validated rules file.
type File struct {
	// Version ("version") is the schema version, "v1"; optional.
	Version string
	// Rules ("rules") are applied in file order.
	Rules []Rule
	// Tenants ("tenants") lets tenants write rules of their own within
	// these limits; nil when they may not. Only the main file has it.
	Tenants *Tenants

	// lines holds the line of the fields that checks after decoding
	// report, by path (see decoder.lineOf); nil for a File not parsed.
	lines map[string]int
}

// Equal reports whether f and o hold the same rules, wherever in the file
// they are written.
func (f *File) Equal(o *File) bool {
	if f == nil || o == nil {
		return f == o
	}
	return f.Version == o.Version && reflect.DeepEqual(f.Rules, o.Rules) && f.Tenants.Equal(o.Tenants)
}

// Rule says which metadata the objects it selects must carry. Selection
// fields are optional and combine with AND; a rule without them selects
// every object of its resources. Each rule sets or removes at least one key.
type Rule struct {
	// Name ("name") identifies the rule in logs, metrics and errors: a DNS
	// label, unique in the file.
	Name string
	// Resources ("resources") are the resources the rule targets, named as
	// kubectl names them: plural, singular or short name, optionally
	// qualified with the group ("frigates.ship.nwiizo.dev") or version and
	// group ("deployments.v1.apps").
	Resources []string

	// Namespaces ("namespaces") selects objects in namespaces matching any
	// of these globs (path.Match syntax: *, ?, [a-z]). For the namespaces
	// resource itself, a Namespace's own name is matched.
	Namespaces []string
	// ExcludeNamespaces ("excludeNamespaces") leaves out objects in
	// namespaces matching any of these globs.
	ExcludeNamespaces []string
	// NamespaceSelector ("namespaceSelector") selects objects whose
	// namespace's labels match this label selector, in kubectl syntax
	// ("team=a,env in (prod)").
	NamespaceSelector string
	// Selector ("selector") selects objects whose labels match this label
	// selector.
	Selector string
	// Names ("names") selects objects whose name matches any of these globs.
	Names []string
	// When ("when") is a CEL condition, as in admission policies: the rule
	// selects only objects for which it yields true. It reads object (the
	// object) and namespaceObject (its Namespace's metadata; null for a
	// cluster-scoped object).
	When string
	// Mode ("mode") is what the rule does with the objects it selects:
	// "enforce" (the default) writes what it wants; "audit" only reports
	// what it would change, in logs, metrics and events, and never writes.
	Mode string
	// OptOutLocked ("allowOptOut", given false) makes the rule apply to
	// objects that opt out with IgnoreAnnotation, or whose namespace does:
	// for rules that enforce policy, which the objects' editors must not
	// escape. Rules allow opting out by default.
	OptOutLocked bool
	// Locked ("locked") locks the keys the rule sets and removes: only its
	// users and groups may set, change or remove them on the rule's
	// resources, which the ValidatingAdmissionPolicies that package keylock
	// generates enforce. Nil when the rule does not lock its keys.
	Locked *Lock
	// PodTemplates ("podTemplates"), on a rule for Pods, has the admission
	// policy also set the rule's keys in the pod templates of the workloads
	// created (Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs and
	// CronJobs), read from the template as from the Pod, at CREATE only.
	// Nothing else ever writes a template.
	PodTemplates bool
	// OwnerObject ("ownerObject") says which of the object's controller
	// owners CEL's ownerObject is, as a fromOwner value says it: the owner
	// resources walked through, and the one read (the root by default).
	// The decoder completes it when an expression of the rule reads
	// ownerObject; nil when none does.
	OwnerObject *Owners

	// Tenant is the namespace of the tenant whose rules file holds the
	// rule, "" for a rule of the main file: package tenants sets it when it
	// merges a tenant's rules, which apply in that namespace only. The
	// admission policies leave tenant rules to the controller.
	Tenant string

	// Annotations ("annotations", "removeAnnotations", "copy") are the
	// annotations the rule sets, removes and copies.
	Annotations Metadata
	// Labels ("labels", "removeLabels", "copy") are the labels the rule
	// sets, removes and copies.
	Labels Metadata
}

// Metadata is what a rule does with one kind of metadata, annotations or
// labels: the keys it sets, by how their value is given, and the keys it
// removes. The keys of Values, From, CEL, FromNamespace and FromRelated
// are distinct; IfAbsent, Default and IfInvalid say more of some of them.
type Metadata struct {
	// Values (the keys given a string) are set to these literal values.
	Values map[string]string
	// From (the keys given {jsonPath: '{.spec.foo}'}) are set to the value
	// read from the object with that kubectl JSONPath template.
	From map[string]string
	// CEL (the keys given {cel: "…"}) are set to the string a CEL
	// expression yields for the object, which it reads as Rule.When does.
	// Any other result, or an error, leaves the key unset; for a label, so
	// does a value that is no valid label value, unless IfInvalid makes it
	// one.
	CEL map[string]string
	// FromNamespace (the keys given {fromNamespace: {label: KEY}} or
	// {fromNamespace: {annotation: KEY}}) are set to the value of that
	// label or annotation of the object's namespace (of the Namespace
	// itself, for the namespaces resource), and follow it when it changes.
	// A cluster-scoped object has no namespace: such a key is not set on
	// it, and the problem is logged.
	FromNamespace map[string]NamespaceKey
	// FromRelated (the keys given {fromNode: …} or {fromOwner: …}) are set
	// to the value of that label or annotation of an object the object
	// names (see source.Source) — a Pod's Node, its owner — and follow it
	// when it changes. A Pod not yet scheduled names no Node: the key is
	// set once it is.
	FromRelated map[string]RelatedKey
	// IfAbsent (the keys given ifAbsent: true, as in {value: "baseline",
	// ifAbsent: true}) are set only on objects that lack them: a present
	// key is never changed. A key the controller added stays its own,
	// updated and pruned with the rule, until another field manager
	// changes it; it is theirs from then on.
	IfAbsent map[string]bool
	// Default (the keys given default: "…" next to a computed value, as in
	// {jsonPath: '{.spec.x}', default: "unknown"}) are set to the default
	// when the value's source is missing: the field, the namespace's key,
	// or the namespace itself.
	Default map[string]string
	// Fallback (the keys given a value form as default, as in {fromOwner:
	// {label: team}, default: {fromNamespace: {label: team}, default:
	// "none"}}) are read from the form's source when the main form's
	// source is missing or its value is not valid: each is the Metadata of
	// that one key, with its own Default, Fallback and IfInvalid. The
	// first level that gives a valid value sets it; a literal ends the
	// chain, which is at most MaxFallbacks deep.
	Fallback map[string]*Metadata
	// IfInvalid (labels only: the keys given ifInvalid: next to a computed
	// value, as in {jsonPath: '{.spec.x}', ifInvalid: truncate}) says, by
	// key, how a value read that is no valid label value is made one: one
	// of labelvalue.Modes. Without it, such a value sets nothing.
	// Annotation values have no such limit.
	IfInvalid map[string]string
	// Once (the keys given once: true next to a computed value, as in
	// {fromNamespace: {label: team}, once: true}) are recorded: set where
	// the object lacks them, then kept as they are — whoever set them —
	// whatever their source becomes, and never deleted for a source gone
	// missing. The controller owns the keys it set, and prunes them when
	// no rule wants them.
	Once map[string]bool
	// Remove ("removeAnnotations", "removeLabels") are deleted, whoever set
	// them.
	Remove []string
	// Copy ("copy", the items naming labels or annotations) are the key
	// sets copied from related objects: every key of them that matches,
	// under the same name, following them as they change. A key the rule
	// sets otherwise, or removes, is not copied; a copied key is set as
	// IfAbsent's are: never over a value another field manager set.
	Copy []KeySet
}

// Computed returns the keys m sets to a value read, each to "".
func (m *Metadata) Computed() map[string]string {
	out := KeysOf(m.From)
	for _, keys := range []map[string]string{KeysOf(m.CEL), KeysOf(m.FromNamespace), KeysOf(m.FromRelated)} {
		maps.Copy(out, keys)
	}
	return out
}

// MaxFallbacks is how many value forms a default chain may hold after
// the key's own.
const MaxFallbacks = 4

// Levels returns m and the Metadata of every value form given as a
// default in it, at any depth: what a rule reads to set m's keys.
func (m *Metadata) Levels() []*Metadata {
	out := []*Metadata{m}
	for _, k := range slices.Sorted(maps.Keys(m.Fallback)) {
		out = append(out, m.Fallback[k].Levels()...)
	}
	return out
}

// Levels returns the Levels of r's annotations, then of its labels.
func (r *Rule) Levels() []*Metadata { return append(r.Annotations.Levels(), r.Labels.Levels()...) }

// Of returns r's Metadata of kind, AnnotationKind or LabelKind.
func (r *Rule) Of(kind string) *Metadata {
	if kind == LabelKind {
		return &r.Labels
	}
	return &r.Annotations
}

// Selective reports whether the rule selects only some objects of its
// resources.
func (r *Rule) Selective() bool {
	return len(r.Namespaces) > 0 || len(r.ExcludeNamespaces) > 0 || r.NamespaceSelector != "" ||
		r.Selector != "" || len(r.Names) > 0 || r.When != ""
}

// Equal reports whether r and o are the same rule.
func (r *Rule) Equal(o *Rule) bool { return reflect.DeepEqual(r, o) }
