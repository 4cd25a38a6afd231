package rules

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// OptsOut reports whether annotations carry IgnoreAnnotation: "true".
func OptsOut(annotations map[string]string) bool {
	return annotations[rulefile.IgnoreAnnotation] == "true"
}

// Ignored returns why obj, an object of t, is left alone — it or its
// namespace, as look finds it, opts out — or "" when the rules apply to
// it.
func (t *Target) Ignored(obj metav1.Object, look source.Lookup) string {
	if OptsOut(obj.GetAnnotations()) {
		return fmt.Sprintf("the object carries %s: \"true\"", rulefile.IgnoreAnnotation)
	}
	if ns := obj.GetNamespace(); ns != "" {
		if m, ok := source.NamespaceOf(look, ns); ok && OptsOut(m.GetAnnotations()) {
			return fmt.Sprintf("namespace %q carries %s: \"true\"", ns, rulefile.IgnoreAnnotation)
		}
	}
	return ""
}

// ControlAnnotations are the annotation keys the controller reads whatever
// the rules say. A cache that keeps only the keys the rules name must keep
// these too.
var ControlAnnotations = []string{rulefile.IgnoreAnnotation}

// Locked returns the part of t whose rules apply to objects that opt out
// (allowOptOut: false), or nil when no rule of t does.
func (t *Target) Locked() *Target {
	var locked []*Compiled
	for _, r := range t.Rules {
		if r.OptOutLocked {
			locked = append(locked, r)
		}
	}
	if len(locked) == 0 {
		return nil
	}
	return &Target{Resource: t.Resource, Rules: locked, ReadsObjects: t.ReadsObjects,
		NeedsNamespaceLabels: t.NeedsNamespaceLabels, ReadsNamespaces: t.ReadsNamespaces, excluded: t.excluded, sources: t.sources}
}
