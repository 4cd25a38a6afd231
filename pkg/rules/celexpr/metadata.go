package celexpr

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// MetadataOnly reports whether exprs read of the object only what a
// metadata cache keeps of it: apiVersion, kind, metadata.name,
// metadata.namespace, metadata.uid, and annotations and labels by key
// (which the cache keeps because the rules name them: see Reads).
func MetadataOnly(exprs []*Expr) bool {
	for _, e := range exprs {
		if slices.ContainsFunc(e.Reads, func(p []string) bool { return !MetadataPath(p) }) {
			return false
		}
	}
	return true
}

// MetadataPath reports whether the field at p is one a metadata cache
// keeps.
func MetadataPath(p []string) bool {
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

// MetadataField is a field of what a metadata cache keeps, as a bit of the
// set of those fields CEL expressions read.
type MetadataField uint8

const (
	ReadsName MetadataField = 1 << iota
	ReadsNamespace
	ReadsUID
	ReadsLabels
	ReadsAnnotations
	ReadsKind // apiVersion or kind
)

// metadataFields returns the fields of what a metadata cache keeps that
// exprs read.
func MetadataFields(exprs []*Expr) MetadataField {
	var f MetadataField
	for _, e := range exprs {
		f |= e.metadataFields
	}
	return f
}

// readMetadataFields returns the fields of what a metadata cache keeps
// that the paths reads read.
func readMetadataFields(reads [][]string) MetadataField {
	var f MetadataField
	for _, p := range reads {
		switch {
		case len(p) == 1:
			f |= ReadsKind
		case len(p) < 2 || p[0] != "metadata":
		case p[1] == "name":
			f |= ReadsName
		case p[1] == "namespace":
			f |= ReadsNamespace
		case p[1] == "uid":
			f |= ReadsUID
		case p[1] == "labels":
			f |= ReadsLabels
		case p[1] == "annotations":
			f |= ReadsAnnotations
		}
	}
	return f
}

// MetadataContent returns what CEL expressions reading only what
// MetadataOnly allows read of obj, an object as a metadata cache
// keeps it: the fields of it they read, in a new map, sharing its
// annotations and labels.
func MetadataContent(obj metav1.Object, fields MetadataField) map[string]any {
	md := make(map[string]any, 2)
	if ns := obj.GetNamespace(); ns != "" && fields&ReadsNamespace != 0 {
		md["namespace"] = ns
	}
	if fields&ReadsName != 0 {
		md["name"] = obj.GetName()
	}
	if uid := obj.GetUID(); uid != "" && fields&ReadsUID != 0 {
		md["uid"] = string(uid)
	}
	if l := obj.GetLabels(); l != nil && fields&ReadsLabels != 0 {
		md["labels"] = l
	}
	if a := obj.GetAnnotations(); a != nil && fields&ReadsAnnotations != 0 {
		md["annotations"] = a
	}
	out := map[string]any{"metadata": md}
	if k, ok := obj.(interface{ GetObjectKind() schema.ObjectKind }); ok && fields&ReadsKind != 0 {
		if gvk := k.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
			out["apiVersion"], out["kind"] = gvk.GroupVersion().String(), gvk.Kind
		}
	}
	return out
}
