package spec

import "slices"

// Tenants ("tenants", in the main rules file only) lets the tenants of a
// cluster write rules of their own, each in a ConfigMap of their
// namespace, within the limits set here: package tenants checks a tenant's
// file against them and merges what they allow after the main file's rules.
type Tenants struct {
	// ConfigMap ("configMap") is the name of the ConfigMap that holds a
	// tenant's rules in its namespace; ConfigMapSelector
	// ("configMapSelector") a label selector, in kubectl syntax, that
	// finds them instead. The controller caches only those ConfigMaps.
	ConfigMap, ConfigMapSelector string
	// Key ("key") is the key of the ConfigMap's data that holds the file.
	Key string
	// NamespaceSelector ("namespaceSelector") is a label selector, in
	// kubectl syntax, of the namespaces whose tenants may write rules;
	// "" for every namespace.
	NamespaceSelector string
	// Resources ("resources") are the resources tenant rules may name,
	// written as the tenant must write them. "namespaces" lets a tenant's
	// rules write its own Namespace.
	Resources []string
	// Labels and Annotations ("keys": {labels: […], annotations: […]})
	// are globs of the keys tenant rules may set or remove, in which * and
	// ? match '/' too (glob.MatchKey).
	Labels, Annotations []string
	// MaxRules, MaxKeys and MaxValueBytes ("maxRules", "maxKeys",
	// "maxValueBytes") bound a tenant's file: its rules, the keys they set
	// or remove in all, and the length of each value given literally.
	MaxRules, MaxKeys, MaxValueBytes int
	// ValueForms ("valueForms") are the value forms tenant rules may use
	// ("value", "jsonPath", "cel", "fromNamespace", "fromOwner", "fromNode",
	// "fromRef", "copy"); a when condition or ownerObject counts as "cel".
	ValueForms []string
	// WritesPerSecond ("writesPerSecond") is how many objects a tenant's
	// rules may have the controller change per second, in a burst of as
	// many: a write that changes a key of a tenant's rule waits its turn.
	WritesPerSecond int
	// MaxChanges ("maxChanges") holds a tenant's new file that would
	// change more objects than this until the tenant confirms it; 0 holds
	// none.
	MaxChanges int
}

// Defaults of a tenants section.
const (
	DefaultTenantConfigMap     = "kube-annotator-rules"
	DefaultTenantKey           = "rules.yaml"
	DefaultTenantMaxRules      = 20
	DefaultTenantMaxKeys       = 50
	DefaultTenantMaxValueBytes = 1024
	// DefaultTenantWritesPerSecond paces a tenant's 1,000 changed objects
	// over 100 seconds.
	DefaultTenantWritesPerSecond = 10
)

// DefaultTenantValueForms are the value forms tenant rules may use unless
// the section says otherwise: those that read only the object itself, its
// namespace and its owners.
var DefaultTenantValueForms = []string{"value", "jsonPath", "fromNamespace", "fromOwner"}

// Equal reports whether t and o set the same limits.
func (t *Tenants) Equal(o *Tenants) bool {
	if t == nil || o == nil {
		return t == o
	}
	return t.ConfigMap == o.ConfigMap && t.ConfigMapSelector == o.ConfigMapSelector && t.Key == o.Key &&
		t.NamespaceSelector == o.NamespaceSelector && slices.Equal(t.Resources, o.Resources) &&
		slices.Equal(t.Labels, o.Labels) && slices.Equal(t.Annotations, o.Annotations) &&
		t.MaxRules == o.MaxRules && t.MaxKeys == o.MaxKeys && t.MaxValueBytes == o.MaxValueBytes &&
		slices.Equal(t.ValueForms, o.ValueForms) && t.WritesPerSecond == o.WritesPerSecond && t.MaxChanges == o.MaxChanges
}

// KeysOf returns the key globs tenant rules may set or remove of kind.
func (t *Tenants) KeysOf(kind string) []string {
	if kind == LabelKind {
		return t.Labels
	}
	return t.Annotations
}
