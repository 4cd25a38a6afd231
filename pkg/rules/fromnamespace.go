package rules

import (
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// ReadsNamespace reports whether the rule reads values, or copies key
// sets, from the object's namespace.
func (c *Compiled) ReadsNamespace() bool {
	return slices.ContainsFunc(c.Levels(), func(m *rulefile.Metadata) bool { return len(m.FromNamespace) > 0 }) || c.copiesFrom(source.Namespace)
}

// namespaceKeys returns the keys of namespaces the rule reads: labels for
// fromNamespace, and annotations for fromNamespace.
func (c *Compiled) namespaceKeys() (labelKeys, annotationKeys []string) {
	for _, m := range c.Levels() {
		for _, k := range m.FromNamespace {
			if k.Kind == rulefile.LabelKind {
				labelKeys = append(labelKeys, k.Key)
			} else {
				annotationKeys = append(annotationKeys, k.Key)
			}
		}
	}
	for _, e := range c.celExprs() {
		_, a := celexpr.MetadataKeys(e.NamespaceReads)
		annotationKeys = append(annotationKeys, a...)
	}
	return labelKeys, annotationKeys
}

// NamespaceKeys returns, sorted, the label and annotation keys of
// namespaces that the rules of t read with fromNamespace. (A rule with a
// namespaceSelector reads every label: see NeedsNamespaceLabels.)
func (t *Target) NamespaceKeys() (labelKeys, annotationKeys []string) {
	for _, r := range t.Rules {
		l, a := r.namespaceKeys()
		labelKeys, annotationKeys = append(labelKeys, l...), append(annotationKeys, a...)
	}
	slices.Sort(labelKeys)
	slices.Sort(annotationKeys)
	return slices.Compact(labelKeys), slices.Compact(annotationKeys)
}

// NamespaceKeys returns, sorted, the label and annotation keys of
// namespaces that any rule of s reads with fromNamespace: what a cache of
// namespaces must keep, besides every label when a rule has a
// namespaceSelector and ControlAnnotations.
func (s *Set) NamespaceKeys() (labelKeys, annotationKeys []string) {
	for _, t := range s.Targets {
		l, a := t.NamespaceKeys()
		labelKeys, annotationKeys = append(labelKeys, l...), append(annotationKeys, a...)
	}
	slices.Sort(labelKeys)
	slices.Sort(annotationKeys)
	return slices.Compact(labelKeys), slices.Compact(annotationKeys)
}

// NamespaceChangeMatters reports whether a change of a namespace from old
// to new can change what the rules of t want of the objects in it: a
// change of its labels when a rule selects by them, or of a label or
// annotation a rule reads. (Opting in or out is the caller's to notice.)
func (t *Target) NamespaceChangeMatters(old, new metav1.Object) bool {
	if t.NeedsNamespaceLabels && !maps.Equal(old.GetLabels(), new.GetLabels()) {
		return true
	}
	labelKeys, annotationKeys := t.NamespaceKeys()
	return changed(old.GetLabels(), new.GetLabels(), labelKeys) ||
		changed(old.GetAnnotations(), new.GetAnnotations(), annotationKeys)
}

// changed reports whether a and b differ on any of keys.
func changed(a, b map[string]string, keys []string) bool {
	for _, k := range keys {
		va, oka := a[k]
		vb, okb := b[k]
		if oka != okb || va != vb {
			return true
		}
	}
	return false
}

// home returns the namespace whose keys fromNamespace reads for obj, an
// object of t: the Namespace itself for the namespaces resource, else
// obj's namespace from namespaces; nil, and why, when there is none.
func (t *Target) home(obj metav1.Object, namespaces source.Lookup) (metav1.Object, string) {
	if t.isNamespaces() {
		return obj, ""
	}
	ns := obj.GetNamespace()
	if ns == "" {
		return nil, "the object is cluster-scoped and has no namespace to read"
	}
	home, ok := source.NamespaceOf(namespaces, ns)
	if !ok {
		return nil, fmt.Sprintf("namespace %q is not known", ns)
	}
	return home, ""
}
