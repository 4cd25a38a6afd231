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

// metadataField is a field of what a metadata cache keeps, as a bit of the
// set of those fields CEL expressions read.
type metadataField uint8

const (
	readsName metadataField = 1 << iota
	readsNamespace
	readsUID
	readsLabels
	readsAnnotations
	readsKind // apiVersion or kind
)

// metadataFields returns the fields of what a metadata cache keeps that
// exprs read.
func metadataFields(exprs []*celExpr) metadataField {
	var f metadataField
	for _, e := range exprs {
		f |= e.metadataFields
	}
	return f
}

// readMetadataFields returns the fields of what a metadata cache keeps
// that the paths reads read.
func readMetadataFields(reads [][]string) metadataField {
	var f metadataField
	for _, p := range reads {
		switch {
		case len(p) == 1:
			f |= readsKind
		case len(p) < 2 || p[0] != "metadata":
		case p[1] == "name":
			f |= readsName
		case p[1] == "namespace":
			f |= readsNamespace
		case p[1] == "uid":
			f |= readsUID
		case p[1] == "labels":
			f |= readsLabels
		case p[1] == "annotations":
			f |= readsAnnotations
		}
	}
	return f
}

// metadataContent returns what CEL expressions reading only what
// readsMetadataOnly allows read of obj, an object as a metadata cache
// keeps it: the fields of it they read, in a new map, sharing its
// annotations and labels.
func metadataContent(obj metav1.Object, fields metadataField) map[string]any {
	md := make(map[string]any, 2)
	if ns := obj.GetNamespace(); ns != "" && fields&readsNamespace != 0 {
		md["namespace"] = ns
	}
	if fields&readsName != 0 {
		md["name"] = obj.GetName()
	}
	if uid := obj.GetUID(); uid != "" && fields&readsUID != 0 {
		md["uid"] = string(uid)
	}
	if l := obj.GetLabels(); l != nil && fields&readsLabels != 0 {
		md["labels"] = l
	}
	if a := obj.GetAnnotations(); a != nil && fields&readsAnnotations != 0 {
		md["annotations"] = a
	}
	out := map[string]any{"metadata": md}
	if k, ok := obj.(interface{ GetObjectKind() schema.ObjectKind }); ok && fields&readsKind != 0 {
		if gvk := k.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
			out["apiVersion"], out["kind"] = gvk.GroupVersion().String(), gvk.Kind
		}
	}
	return out
}
