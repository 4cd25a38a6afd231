package rules

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ReadsFields reports whether the rule reads fields of objects that a
// metadata cache does not keep, so that the resource's cache must keep
// objects with their fields: a JSONPath value, which may read any field,
// a CEL expression that reads more than readsMetadataOnly allows, or a
// value from a related object (fromNode), found through a field of the
// object (a Pod's spec.nodeName).
func (c *Compiled) ReadsFields() bool {
	return len(c.annotationsFrom)+len(c.labelsFrom) > 0 || !readsMetadataOnly(c.celExprs()) || c.readsRelated()
}

// readsMetadataOnly reports whether exprs read of the object only what a
// metadata cache keeps of it: apiVersion, kind, metadata.name,
// metadata.namespace, metadata.uid, and annotations and labels by key
// (which the cache keeps because the rules name them: see Reads).
func readsMetadataOnly(exprs []*celExpr) bool {
	for _, e := range exprs {
		if slices.ContainsFunc(e.reads, func(p []string) bool { return !metadataPath(p) }) {
			return false
		}
	}
	return true
}

// metadataPath reports whether the field at p is one a metadata cache
// keeps.
func metadataPath(p []string) bool {
	switch {
	case len(p) == 1:
		return p[0] == "apiVersion" || p[0] == "kind"
	case len(p) < 2 || p[0] != "metadata":
		return false
	case p[1] == "labels" || p[1] == "annotations":
		return len(p) > 2
	}
	return len(p) == 2 && (p[1] == "name" || p[1] == "namespace" || p[1] == "uid")
}

// celKeys returns the label and annotation keys of objects that the
// rule's CEL expressions read by name.
func (c *Compiled) celKeys() (labelKeys, annotationKeys []string) {
	for _, e := range c.celExprs() {
		l, a := metadataKeys(e.reads)
		labelKeys, annotationKeys = append(labelKeys, l...), append(annotationKeys, a...)
	}
	return labelKeys, annotationKeys
}

// readsKind reports whether exprs read the object's apiVersion or kind.
func readsKind(exprs []*celExpr) bool {
	for _, e := range exprs {
		if slices.ContainsFunc(e.reads, func(p []string) bool { return len(p) == 1 }) {
			return true
		}
	}
	return false
}

// metadataContent returns what CEL expressions reading only what
// readsMetadataOnly allows read of obj, an object as a metadata cache
// keeps it: its metadata in a new map, sharing its annotations and
// labels, and its apiVersion and kind when withKind is set.
func metadataContent(obj metav1.Object, withKind bool) map[string]any {
	md := map[string]any{"name": obj.GetName()}
	if ns := obj.GetNamespace(); ns != "" {
		md["namespace"] = ns
	}
	if uid := obj.GetUID(); uid != "" {
		md["uid"] = string(uid)
	}
	if l := obj.GetLabels(); l != nil {
		md["labels"] = l
	}
	if a := obj.GetAnnotations(); a != nil {
		md["annotations"] = a
	}
	out := map[string]any{"metadata": md}
	if k, ok := obj.(interface{ GetObjectKind() schema.ObjectKind }); ok && withKind {
		if gvk := k.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
			out["apiVersion"], out["kind"] = gvk.GroupVersion().String(), gvk.Kind
		}
	}
	return out
}
