package spec

import ()

// AnnotationKind and LabelKind name what a metadata map holds, in errors.
const (
	AnnotationKind = "annotation"
	LabelKind      = "label"
)
