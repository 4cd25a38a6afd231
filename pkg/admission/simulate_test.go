package admission

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/user"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/client-go/openapi/openapitest"
)

// The simulator evaluates a policy as the API server's admission plugin
// does, with the API server's own CEL compiler, matchers and
// server-side-apply patcher, on typed objects whose schemas come with
// client-go's OpenAPI test data (core/v1 and apps/v1). It is what the unit
// tests know of how a policy behaves; the end-to-end tests run policies on
// a real kube-apiserver.

var (
	scheme       = runtime.NewScheme()
	typeManager  patch.TypeConverterManager
	managerReady = make(chan struct{})
)

func init() {
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
}

// typeConverters starts the type converters once.
func typeConverters(t *testing.T) patch.TypeConverterManager {
	t.Helper()
	select {
	case <-managerReady:
		return typeManager
	default:
	}
	typeManager = patch.NewTypeConverterManager(nil, openapitest.NewEmbeddedFileClient())
	go typeManager.Run(context.Background())
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return typeManager.GetTypeConverter(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}) != nil, nil
	})
	if err != nil {
		t.Fatalf("type converters: %v", err)
	}
	close(managerReady)
	return typeManager
}

// compiled is a policy compiled as the API server compiles a new one.
type compiled struct {
	policy    *admissionregistrationv1.MutatingAdmissionPolicy
	compiler  *plugincel.CompositedCompiler
	matcher   matchconditions.Matcher
	patchers  []patch.Patcher
	compileOK bool
	// paramRef is the binding's, when the policy reads params.
	paramRef *admissionregistrationv1.ParamRef
}

// compileBound is compilePolicy of p's policy, with its binding's paramRef.
func compileBound(t *testing.T, p Policy) *compiled {
	t.Helper()
	c := compilePolicy(t, p.Policy)
	c.paramRef = p.Binding.Spec.ParamRef
	return c
}

// compilePolicy compiles p and fails the test on any compilation error (or
// panic: some expressions make the CEL checker panic, which the API server
// answers with an internal error).
func compilePolicy(t *testing.T, p *admissionregistrationv1.MutatingAdmissionPolicy) (c *compiled) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("policy %s: the CEL compiler panicked: %v", p.Name, r)
		}
	}()
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		t.Fatal(err)
	}
	opts := plugincel.OptionalVariableDeclarations{HasAuthorizer: true, HasParams: p.Spec.ParamKind != nil}
	var vars []plugincel.NamedExpressionAccessor
	for _, v := range p.Spec.Variables {
		vars = append(vars, &validating.Variable{Name: v.Name, Expression: v.Expression})
	}
	compiler.CompileAndStoreVariables(vars, opts, environment.NewExpressions)
	c = &compiled{policy: p, compiler: compiler}
	if len(p.Spec.MatchConditions) > 0 {
		var conds []plugincel.ExpressionAccessor
		for i := range p.Spec.MatchConditions {
			conds = append(conds, (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i]))
		}
		eval := compiler.CompileCondition(conds, opts, environment.NewExpressions)
		for _, err := range eval.CompilationErrors() {
			t.Errorf("policy %s: matchConditions: %v", p.Name, err)
		}
		c.matcher = matchconditions.NewMatcher(eval, p.Spec.FailurePolicy, "policy", "mutate", p.Name)
	}
	opts.HasPatchTypes = true
	for _, m := range p.Spec.Mutations {
		eval := compiler.CompileMutatingEvaluator(&patch.ApplyConfigurationCondition{Expression: m.ApplyConfiguration.Expression}, opts, environment.NewExpressions)
		for _, err := range eval.CompilationErrors() {
			t.Errorf("policy %s: mutation: %v", p.Name, err)
		}
		c.patchers = append(c.patchers, patch.NewApplyConfigurationPatcher(eval))
	}
	c.compileOK = !t.Failed()
	return c
}

// admit is one admission request: obj created (old nil) or updated, of
// resource gvr, in namespace ns (nil for cluster-scoped objects).
type admit struct {
	gvr      schema.GroupVersionResource
	obj, old runtime.Object
	ns       *corev1.Namespace
	user     user.Info // who makes the request; nil for nobody known
	// configMaps are those of the object's namespace, which a policy
	// may read as its params.
	configMaps []*corev1.ConfigMap
}

// params returns the params of c for a: nil for a policy that reads none;
// ok is false when its binding's paramRef names none of a's ConfigMaps,
// which skips the policy (parameterNotFoundAction: Allow).
func (c *compiled) params(a admit) (params runtime.Object, ok bool) {
	if c.paramRef == nil {
		return nil, true
	}
	for _, cm := range a.configMaps {
		if cm.Name == c.paramRef.Name {
			return cm, true
		}
	}
	return nil, false
}

// run applies c to the request as the API server would, with
// failurePolicy Ignore: it returns the object after admission, whether
// the policy applied, and the error the API server would ignore.
func (c *compiled) run(t *testing.T, a admit) (runtime.Object, bool, error) {
	t.Helper()
	if !c.compileOK {
		t.FailNow()
	}
	params, found := c.params(a)
	if !c.selects(t, a) || !found {
		return a.obj, false, nil
	}
	obj := a.obj.DeepCopyObject()
	gvk := obj.GetObjectKind().GroupVersionKind()
	acc, err := metaAccessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	op := admission.Create
	if a.old != nil {
		op = admission.Update
	}
	namespace := acc.GetNamespace()
	if a.gvr.Resource == "namespaces" {
		namespace = acc.GetName()
	}
	attrs := admission.NewAttributesRecord(obj, a.old, gvk, namespace, acc.GetName(), a.gvr, "", op, nil, false, a.user)
	vattrs := &admission.VersionedAttributes{Attributes: attrs, VersionedKind: gvk,
		VersionedObject: admission.NewLazyObject(obj), VersionedOldObject: admission.NewLazyObject(a.old)}
	ctx := c.compiler.CreateContext(t.Context())
	if c.matcher != nil {
		res := c.matcher.Match(ctx, vattrs, params, nil)
		if res.Error != nil {
			return a.obj, false, res.Error
		}
		if !res.Matches {
			return a.obj, false, nil
		}
	}
	converter := typeConverters(t).GetTypeConverter(gvk)
	if converter == nil {
		t.Fatalf("no type converter for %v", gvk)
	}
	for _, p := range c.patchers {
		out, err := p.Patch(ctx, patch.Request{MatchedResource: a.gvr, VersionedAttributes: vattrs,
			ObjectInterfaces: admission.NewObjectInterfacesFromScheme(scheme), Namespace: a.ns, TypeConverter: converter,
			OptionalVariables: plugincel.OptionalVariableBindings{VersionedParams: params}},
			celconfig.RuntimeCELCostBudget)
		if err != nil {
			return a.obj, false, err
		}
		vattrs.UpdateObject(out)
	}
	return vattrs.VersionedObject.Object(), true, nil
}

// selects evaluates the policy's matchConstraints: resource, operation,
// scope, objectSelector (new or old object) and namespaceSelector.
func (c *compiled) selects(t *testing.T, a admit) bool {
	t.Helper()
	m := c.policy.Spec.MatchConstraints
	found := false
	op := admissionregistrationv1.Create
	if a.old != nil {
		op = admissionregistrationv1.Update
	}
	for _, r := range m.ResourceRules {
		namespaced := r.Scope != nil && *r.Scope == admissionregistrationv1.NamespacedScope
		found = found || (r.APIGroups[0] == a.gvr.Group && r.Resources[0] == a.gvr.Resource && slices.Contains(r.Operations, op) && (!namespaced || a.ns != nil))
	}
	if !found {
		return false
	}
	matches := func(sel *metav1.LabelSelector, l map[string]string) bool {
		if sel == nil {
			return true
		}
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			t.Fatal(err)
		}
		return s.Matches(labels.Set(l))
	}
	acc, _ := metaAccessor(a.obj)
	objectOK := matches(m.ObjectSelector, acc.GetLabels())
	if a.old != nil {
		old, _ := metaAccessor(a.old)
		objectOK = objectOK || matches(m.ObjectSelector, old.GetLabels())
	}
	nsLabels := map[string]string(nil)
	switch {
	case a.gvr.Resource == "namespaces":
		nsLabels = acc.GetLabels()
	case a.ns != nil:
		nsLabels = a.ns.Labels
	default: // cluster-scoped: the namespaceSelector does not apply
		return objectOK
	}
	return objectOK && matches(m.NamespaceSelector, nsLabels)
}

func metaAccessor(obj runtime.Object) (metav1.Object, error) {
	acc, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	return acc, nil
}
