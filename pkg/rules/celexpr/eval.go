package celexpr

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// MaxInputKey bounds the key of a memoized CEL result: an expression that
// reads longer values (a large annotation) is evaluated each time.
const MaxInputKey = 1024

// Outcome is what evaluating a CEL expression on an object gave: its
// value, or why it has none.
type Outcome struct {
	Value any
	Err   error
}

// EvalOn evaluates e on obj, whose namespace namespaces gives (it is
// obj itself when isNamespace), as Input makes them readable. Every
// field e reads of them is a variable or a chain of selections from one
// (see walkReads), and CEL is deterministic, so its result is a function
// of the values at those paths: when they are all scalars or missing, the
// result is kept in e's memo by them, and an object whose fields read hold
// values seen before costs e no evaluation. An expression that reads
// request yields ErrAdmissionOnly.
func (e *Expr) EvalOn(obj metav1.Object, isNamespace bool, namespaces source.Lookup) (any, error) {
	if e.ReadsRequest {
		return nil, ErrAdmissionOnly
	}
	var buf [256]byte
	var key []byte
	keyed := e.memo.Use()
	if keyed {
		key, keyed = e.inputKey(buf[:0], obj, isNamespace, namespaces)
	}
	if keyed {
		if o, ok := e.memo.Get(key); ok {
			return o.Value, o.Err
		}
	}
	vars, err := Input(obj, isNamespace, namespaces, e)
	if err != nil {
		return nil, err
	}
	v, err := e.eval(vars)
	if keyed && scalar(v) {
		e.memo.Put(string(key), Outcome{v, err})
	}
	return v, err
}

// scalar reports whether v, a CEL result, holds no reference into what
// it was computed from, so that it may be kept.
func scalar(v any) bool {
	switch v.(type) {
	case nil, string, bool, int64, uint64, float64:
		return true
	}
	return false
}

// inputKey appends to buf the values of the fields e reads of obj and of
// its namespace, as Input gives them to e, and reports whether they
// are all scalars or missing, and so make a key of e's result.
func (e *Expr) inputKey(buf []byte, obj metav1.Object, isNamespace bool, namespaces source.Lookup) ([]byte, bool) {
	content, hasContent := obj.(source.Content)
	for _, p := range e.Reads {
		var ok bool
		switch {
		case hasContent:
			v, at, found := ContentValue(content.UnstructuredContent(), p)
			buf, ok = appendValue(buf, v, at, found)
		case MetadataPath(p):
			s, at, found := metadataValue(obj, p, e.metadataFields)
			buf, ok = appendString(buf, s, at, found)
		}
		if !ok {
			return nil, false
		}
	}
	if len(e.OwnerReads) > 0 {
		owner, err := ownerContent(obj, namespaces, e)
		if owner == nil || err != nil {
			return nil, false // no owner: the error is not kept
		}
		for _, p := range e.OwnerReads {
			v, at, found := ContentValue(owner, p)
			if buf, found = appendValue(buf, v, at, found); !found {
				return nil, false
			}
		}
	}
	if len(e.NamespaceReads) == 0 {
		return buf, len(buf) <= MaxInputKey
	}
	ns := obj.GetNamespace()
	if isNamespace || ns == "" {
		return append(buf, 'N'), len(buf) < MaxInputKey // namespaceObject is null
	}
	m, ok := source.NamespaceOf(namespaces, ns)
	if !ok {
		return nil, false
	}
	for _, p := range e.NamespaceReads {
		s, at, ok := metadataValue(m, p, ReadsName|ReadsLabels|ReadsAnnotations)
		if buf, ok = appendString(buf, s, at, ok); !ok {
			return nil, false
		}
	}
	return buf, len(buf) <= MaxInputKey
}

// ContentValue returns the value at p in m (whose maps of strings may be
// map[string]string: labels and annotations of a namespace, or of a
// cached object): the value, and -1; or the index in p of the first field
// missing. ok is false when a field on the way is not a map, which CEL
// reads as an error that a key cannot tell.
func ContentValue(m map[string]any, p []string) (v any, missingAt int, ok bool) {
	v = m
	for i, k := range p {
		var found bool
		switch c := v.(type) {
		case map[string]any:
			v, found = c[k]
		case map[string]string:
			var s string
			s, found = c[k]
			v = s
		default:
			return nil, 0, false
		}
		if !found {
			return nil, i, true
		}
	}
	return v, -1, true
}

// metadataValue returns the value at p of the content MetadataContent
// gives of obj with fields, as ContentValue does; for a Namespace as
// Input gives it to namespaceObject, fields are its name, labels and
// annotations.
func metadataValue(obj metav1.Object, p []string, fields MetadataField) (v string, missingAt int, ok bool) {
	if len(p) == 0 {
		return "", 0, false // the whole object: a map
	}
	if p[0] == "apiVersion" || p[0] == "kind" {
		k, isTyped := obj.(interface{ GetObjectKind() schema.ObjectKind })
		if !isTyped || fields&ReadsKind == 0 {
			return "", 0, true
		}
		gvk := k.GetObjectKind().GroupVersionKind()
		switch {
		case gvk.Empty():
			return "", 0, true
		case len(p) > 1:
			return "", 0, false
		case p[0] == "kind":
			return gvk.Kind, -1, true
		}
		return gvk.GroupVersion().String(), -1, true
	}
	if p[0] != "metadata" {
		return "", 0, true
	}
	if len(p) == 1 {
		return "", 0, false // metadata: a map
	}
	var s string
	var present bool
	switch p[1] {
	case "name":
		s, present = obj.GetName(), fields&ReadsName != 0
	case "namespace":
		s = obj.GetNamespace()
		present = s != "" && fields&ReadsNamespace != 0
	case "uid":
		s = string(obj.GetUID())
		present = s != "" && fields&ReadsUID != 0
	case "labels":
		return mapValue(obj.GetLabels(), p, fields&ReadsLabels != 0)
	case "annotations":
		return mapValue(obj.GetAnnotations(), p, fields&ReadsAnnotations != 0)
	}
	switch {
	case !present:
		return "", 1, true
	case len(p) > 2:
		return "", 0, false // a string is not a map
	}
	return s, -1, true
}

// mapValue returns the value at p (metadata, labels or annotations, key)
// when the metadata's labels or annotations are m, kept when kept is
// set, as metadataValue does.
func mapValue(m map[string]string, p []string, kept bool) (v string, missingAt int, ok bool) {
	switch {
	case m == nil || !kept:
		return "", 1, true
	case len(p) == 2:
		return "", 0, false // all of them: a map
	}
	s, found := m[p[2]]
	switch {
	case !found:
		return "", 2, true
	case len(p) > 3:
		return "", 0, false
	}
	return s, -1, true
}

// appendValue appends to buf a value ContentValue returned, and reports
// whether it is one a key can hold: a scalar, or a field missing.
func appendValue(buf []byte, v any, missingAt int, ok bool) ([]byte, bool) {
	if !ok || missingAt >= 0 {
		return appendMissing(buf, missingAt, ok)
	}
	switch x := v.(type) {
	case nil:
		return append(buf, 'n'), true
	case string:
		return appendString(buf, x, -1, true)
	case bool:
		if x {
			return append(buf, 't'), true
		}
		return append(buf, 'f'), true
	case int64:
		return binary.BigEndian.AppendUint64(append(buf, 'i'), uint64(x)), true
	case float64:
		return binary.BigEndian.AppendUint64(append(buf, 'd'), math.Float64bits(x)), true
	}
	return nil, false
}

// appendString appends to buf a value metadataValue returned, as
// appendValue does.
func appendString(buf []byte, s string, missingAt int, ok bool) ([]byte, bool) {
	if !ok || missingAt >= 0 {
		return appendMissing(buf, missingAt, ok)
	}
	if len(s) > MaxInputKey {
		return nil, false
	}
	buf = binary.AppendUvarint(append(buf, 's'), uint64(len(s)))
	return append(buf, s...), true
}

// appendMissing appends to buf that the field at index missingAt of a
// path is missing, and reports whether it could: not when ok is false (a
// field on the way is not a map).
func appendMissing(buf []byte, missingAt int, ok bool) ([]byte, bool) {
	if !ok || missingAt > math.MaxUint8 {
		return nil, false
	}
	return append(buf, 'm', byte(missingAt)), true
}

// Vars are the variables of an evaluation, as Input reads them: the
// object's content; the metadata of its Namespace, nil for a
// cluster-scoped object or a Namespace, as admission gives them; its
// owner's content, nil when no expression reads ownerObject.
type Vars struct {
	Object, Namespace, Owner map[string]any
}

// Input returns what exprs, CEL expressions of a rule, read of obj: its
// content (its metadata, from a metadata cache, when they read no more),
// the metadata of its Namespace and its owner; or why they cannot be
// read (a SourceMissing when the owner is not found).
func Input(obj metav1.Object, isNamespace bool, look source.Lookup, exprs ...*Expr) (Vars, error) {
	var vars Vars
	switch u, ok := obj.(source.Content); {
	case ok:
		vars.Object = u.UnstructuredContent()
	case MetadataOnly(exprs):
		vars.Object = MetadataContent(obj, MetadataFields(exprs))
	default:
		return vars, fmt.Errorf("the cache holds only the metadata of %T; CEL cannot read the object", obj)
	}
	var err error
	if vars.Owner, err = ownerContent(obj, look, exprs...); err != nil {
		return vars, err
	}
	needsNamespace := slices.ContainsFunc(exprs, func(e *Expr) bool { return len(e.NamespaceReads) > 0 })
	ns := obj.GetNamespace()
	if !needsNamespace || isNamespace || ns == "" {
		return vars, nil
	}
	m, ok := source.NamespaceOf(look, ns)
	if !ok {
		return vars, fmt.Errorf("namespace %q is not known", ns)
	}
	md := map[string]any{"name": m.GetName()}
	if l := m.GetLabels(); l != nil {
		md["labels"] = l
	}
	if a := m.GetAnnotations(); a != nil {
		md["annotations"] = a
	}
	vars.Namespace = map[string]any{"metadata": md}
	return vars, nil
}

// ownerContent returns the content of obj's owner that the first of
// exprs to read ownerObject finds through look (its Walk): nil when none
// reads it; a SourceMissing when it is not found.
func ownerContent(obj metav1.Object, look source.Lookup, exprs ...*Expr) (map[string]any, error) {
	i := slices.IndexFunc(exprs, func(e *Expr) bool { return len(e.OwnerReads) > 0 })
	if i < 0 {
		return nil, nil
	}
	if exprs[i].Owner == nil {
		return nil, SourceMissing{"no owner can be read here"}
	}
	o, _, why := exprs[i].Owner.Owner(obj, look)
	if why != "" {
		return nil, SourceMissing{why}
	}
	if c, ok := o.(source.Content); ok {
		return c.UnstructuredContent(), nil
	}
	return MetadataContent(o, ReadsName|ReadsNamespace|ReadsUID|ReadsLabels|ReadsAnnotations|ReadsKind), nil
}
