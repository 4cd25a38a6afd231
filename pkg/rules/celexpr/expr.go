package celexpr

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apimachinery/pkg/util/version"
	admissioncel "k8s.io/apiserver/pkg/admission/plugin/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// CEL variables a rule's expressions read, as in admission policies.
const (
	// Object is the object the rule is evaluated on.
	Object = "object"
	// NamespaceObject is the object's Namespace, null for a
	// cluster-scoped object; the controller knows its metadata only.
	NamespaceObject = "namespaceObject"
	// OwnerObject is the object's controller owner, found by a walk up
	// its owners (Expr.Owner): the controller reads it from its cache,
	// with the fields the expression reads. Admission policies cannot
	// read it.
	OwnerObject = "ownerObject"
	// Request is the admission request (who makes it, the operation),
	// typed as admission policies type it. Only an admission policy knows
	// it: the controller evaluates no expression that reads it, and a
	// rule may read it only in a recorded value (once: true).
	Request = "request"
)

// SourceMissing is what evaluating an expression that reads ownerObject
// returns for an object whose owner is not found: a missing source, as
// for a fromOwner value, so that the rule's default applies.
type SourceMissing struct{ Why string }

// Error implements error.
func (e SourceMissing) Error() string { return OwnerObject + ": " + e.Why }

// ErrAdmissionOnly is what evaluating an expression that reads request
// returns outside admission: the request that created the object is not
// known after it.
var ErrAdmissionOnly = errors.New("request is known at admission only, and this object was not admitted through the rule's policy")

// Result types of CEL expressions.
var (
	BoolType   = types.BoolType
	StringType = types.StringType
	// StringMapType is what a copy computed in CEL yields: keys and their
	// values.
	StringMapType = types.NewMapType(types.StringType, types.StringType)
)

// celEnv is the API server's CEL environment for stored expressions (the
// one admission policies are evaluated in, with the Kubernetes libraries),
// extended with the variables rules read, both dyn.
var celEnv = sync.OnceValues(func() (*cel.Env, error) { return NewEnv(nil) })

// NewEnv returns the environment of celEnv with object of type
// object's CEL type (dyn when object is nil); namespaceObject stays dyn,
// and request is typed as the API server types it for admission policies.
func NewEnv(object *apiservercel.DeclType) (*cel.Env, error) {
	request := admissioncel.BuildRequestType()
	objectType, decls := cel.DynType, []*apiservercel.DeclType{request}
	if object != nil {
		objectType, decls = object.CelType(), append(decls, object)
	}
	set, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Extend(environment.VersionedOptions{
		IntroducedVersion: version.MajorMinor(1, 0),
		EnvOptions: []cel.EnvOption{
			cel.Variable(Object, objectType),
			cel.Variable(NamespaceObject, cel.DynType),
			cel.Variable(OwnerObject, cel.DynType),
			cel.Variable(Request, request.CelType()),
		},
		DeclTypes: decls,
	})
	if err != nil {
		return nil, err
	}
	return set.Env(environment.StoredExpressions)
}

// Expr is a compiled CEL expression of a rule: a when condition or a
// cel value.
type Expr struct {
	Source  string
	program cel.Program
	// reads are the paths of the object's fields the expression reads,
	// each a list of field names from the object's root; an empty path
	// reads the whole object.
	Reads [][]string
	// namespaceReads are the paths it reads of namespaceObject.
	NamespaceReads [][]string
	// OwnerReads are the paths it reads of ownerObject; an empty path
	// reads the whole owner.
	OwnerReads [][]string
	// Owner is the walk that finds the owner ownerObject is, set by the
	// rule the expression belongs to; nil reads no owner.
	Owner *source.Walk
	// ReadsRequest reports whether it reads request, which only an
	// admission policy knows (ErrAdmissionOnly).
	ReadsRequest bool
	// metadataFields are the fields of what a metadata cache keeps that
	// reads read.
	metadataFields MetadataField
	// memo keeps its results by the values of what it reads (EvalOn).
	memo Memo[Outcome]
}

// Compile compiles src, which must yield want (types.BoolType for a
// condition, types.StringType for a value) or dyn, and bounds its
// evaluation by the API server's per-call cost limit.
func Compile(src string, want *types.Type) (*Expr, error) {
	env, err := celEnv()
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	checked, err := Check(env, src, want)
	if err != nil {
		return nil, err
	}
	prg, err := env.Program(checked,
		cel.CostLimit(celconfig.PerCallLimit),
		cel.InterruptCheckFrequency(celconfig.CheckFrequency))
	if err != nil {
		return nil, err
	}
	e := &Expr{Source: src, program: prg, memo: Memo[Outcome]{Max: maxResults}}
	walkReads(checked.NativeRep().Expr(), e)
	e.metadataFields = readMetadataFields(e.Reads)
	return e, nil
}

// Check parses and type-checks src in env; it must yield want or dyn.
func Check(env *cel.Env, src string, want *types.Type) (*cel.Ast, error) {
	checked, iss := env.Compile(src)
	if iss.Err() != nil {
		var msgs []string
		for _, e := range iss.Errors() {
			msgs = append(msgs, fmt.Sprintf("column %d: %s", e.Location.Column()+1, e.Message))
		}
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	out := checked.OutputType()
	if !yields(out, want) {
		return nil, fmt.Errorf("must yield a %s, but yields a %s", want, out)
	}
	return checked, nil
}

// yields reports whether a value of type out is one of type want, as far
// as the types tell: the type, or dyn; for a map, a map whose key and
// value types are each the wanted one, or dyn.
func yields(out, want *types.Type) bool {
	if out.IsExactType(want) || out.IsExactType(types.DynType) {
		return true
	}
	if out.Kind() != types.MapKind || want.Kind() != types.MapKind {
		return false
	}
	for i, p := range out.Parameters() {
		if !yields(p, want.Parameters()[i]) {
			return false
		}
	}
	return true
}

// eval evaluates e with vars.
func (e *Expr) eval(vars Vars) (any, error) {
	v, _, err := e.program.Eval(&celActivation{vars})
	if err != nil {
		return nil, err
	}
	if m, ok := v.(traits.Mapper); ok {
		return m.ConvertToNative(reflect.TypeFor[map[string]string]()) // a map of strings, else an error
	}
	return v.Value(), nil
}

// celActivation is the variables of an evaluation: object,
// namespaceObject and ownerObject, each null when nil.
type celActivation struct{ Vars }

// ResolveName returns the value of the variable name.
func (a *celActivation) ResolveName(name string) (any, bool) {
	var v map[string]any
	switch name {
	case Object:
		v = a.Object
	case NamespaceObject:
		v = a.Namespace
	case OwnerObject:
		v = a.Owner
	default:
		return nil, false
	}
	if v == nil {
		return types.NullValue, true
	}
	return v, true
}

// Parent returns nil: an activation of rules has no parent.
func (a *celActivation) Parent() interpreter.Activation { return nil }

// walkReads adds to e the object paths that x reads. A chain of field
// selections, optional selections and constant indexes rooted at object
// is one read of its deepest field; "'k' in path" reads path.k.
func walkReads(x ast.Expr, e *Expr) {
	roots := []struct {
		name  string
		reads *[][]string
	}{{Object, &e.Reads}, {NamespaceObject, &e.NamespaceReads}, {OwnerObject, &e.OwnerReads}}
	for _, r := range roots {
		if p, ok := objectPath(x, r.name); ok {
			*r.reads = append(*r.reads, p)
			return
		}
	}
	if x.Kind() == ast.IdentKind && x.AsIdent() == Request {
		e.ReadsRequest = true
		return
	}
	if x.Kind() == ast.CallKind && x.AsCall().FunctionName() == operators.In {
		args := x.AsCall().Args()
		if k, ok := constString(args[0]); ok {
			for _, r := range roots {
				if p, ok := objectPath(args[1], r.name); ok {
					*r.reads = append(*r.reads, append(p, k))
					return
				}
			}
		}
	}
	for _, c := range children(x) {
		walkReads(c, e)
	}
}

// objectPath returns the field path x reads from the variable root, when
// x is a chain of selections rooted at it.
func objectPath(x ast.Expr, root string) ([]string, bool) {
	switch x.Kind() {
	case ast.IdentKind:
		return []string{}, x.AsIdent() == root
	case ast.SelectKind:
		s := x.AsSelect()
		p, ok := objectPath(s.Operand(), root)
		return append(p, s.FieldName()), ok
	case ast.CallKind:
		c := x.AsCall()
		switch c.FunctionName() {
		case operators.Index, operators.OptIndex, operators.OptSelect:
			args := c.Args()
			k, isConst := constString(args[1])
			if !isConst {
				return nil, false
			}
			p, ok := objectPath(args[0], root)
			return append(p, k), ok
		}
	}
	return nil, false
}

// constString returns the value of x, when x is a string literal.
func constString(x ast.Expr) (string, bool) {
	if x.Kind() != ast.LiteralKind {
		return "", false
	}
	s, ok := x.AsLiteral().Value().(string)
	return s, ok
}

// children returns the subexpressions of x.
func children(x ast.Expr) []ast.Expr {
	switch x.Kind() {
	case ast.SelectKind:
		return []ast.Expr{x.AsSelect().Operand()}
	case ast.CallKind:
		c := x.AsCall()
		out := c.Args()
		if c.IsMemberFunction() {
			out = append([]ast.Expr{c.Target()}, out...)
		}
		return out
	case ast.ListKind:
		return x.AsList().Elements()
	case ast.MapKind:
		var out []ast.Expr
		for _, en := range x.AsMap().Entries() {
			out = append(out, en.AsMapEntry().Key(), en.AsMapEntry().Value())
		}
		return out
	case ast.StructKind:
		var out []ast.Expr
		for _, f := range x.AsStruct().Fields() {
			out = append(out, f.AsStructField().Value())
		}
		return out
	case ast.ComprehensionKind:
		c := x.AsComprehension()
		return []ast.Expr{c.IterRange(), c.AccuInit(), c.LoopCondition(), c.LoopStep(), c.Result()}
	}
	return nil
}

// Volatile returns what e reads that every write of the controller
// changes, so that what it decides would never settle, or "".
func (e *Expr) Volatile() string {
	for _, p := range e.Reads {
		switch {
		case len(p) == 0:
			return "the whole object"
		case p[0] != "metadata":
		case len(p) == 1:
			return "object.metadata"
		case len(p) == 2 && (p[1] == "labels" || p[1] == "annotations"):
			return "all of object.metadata." + p[1]
		case p[1] == "managedFields" || p[1] == "resourceVersion":
			return "object.metadata." + p[1]
		}
	}
	return ""
}

// MetadataKeys returns the label and annotation keys that paths read by
// name.
func MetadataKeys(paths [][]string) (labelKeys, annotationKeys []string) {
	for _, p := range paths {
		if len(p) < 3 || p[0] != "metadata" {
			continue
		}
		switch p[1] {
		case "labels":
			labelKeys = append(labelKeys, p[2])
		case "annotations":
			annotationKeys = append(annotationKeys, p[2])
		}
	}
	return labelKeys, annotationKeys
}
