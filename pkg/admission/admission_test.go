package admission

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// The markers of the default field manager.
const (
	marker    = "configmaps.admission.kube-annotator.io/kube-annotator"
	nsMarker  = "namespaces.admission.kube-annotator.io/kube-annotator"
	depMarker = "deployments.apps.admission.kube-annotator.io/kube-annotator"
)

var (
	configMaps  = rulestest.ConfigMaps.GVR
	namespaces  = rulestest.Namespaces.GVR
	deployments = rulestest.Deployments.GVR
	// served are the resources the tests' cluster serves.
	served = []source.Resource{rulestest.ConfigMaps, rulestest.Namespaces, rulestest.Deployments, rulestest.Pods}
)

func options() Options {
	return Options{FieldManager: reconcile.FieldManager, ExcludeNamespaces: rules.DefaultExcludedNamespaces}
}

func cm(ns, name string, anns, lbls, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: anns, Labels: lbls}, Data: data}
}

func namespace(name string, lbls map[string]string) *corev1.Namespace {
	return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
}

func deployment(ns, name string, replicas int32, image string) *appsv1.Deployment {
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	d.Spec.Replicas = &replicas
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: image}}
	return d
}

// request is one admission request of a test case and what it must give.
type request struct {
	name     string
	gvr      schema.GroupVersionResource
	obj, old runtime.Object
	ns       map[string]string // labels of the object's namespace
	// want are the annotations and labels after admission.
	wantAnns, wantLabels map[string]string
	// ignored is set when a policy fails and the API server ignores it.
	ignored bool
	// unwatched is set when the controller does not see the object (it
	// watches another namespace).
	unwatched bool
	// controller are the annotations the controller still changes: what
	// the notes leave to it; controllerLabels the labels.
	controller, controllerLabels []string
	// nsIgnored is set when the object's namespace opts out.
	nsIgnored bool
	// user makes the request; nil for nobody known.
	user user.Info
	// configMaps are those of the object's namespace, which policies and
	// the controller may read.
	configMaps []*corev1.ConfigMap
}

// translateTest is a rules file, what Translate makes of it, and requests
// admitted through the policies it made.
type translateTest struct {
	name     string
	rules    string
	opts     func(*Options)
	policies []string
	notes    []string
	requests []request
}

// web are the labels of the objects the tests' selectors select.
var web = map[string]string{"app": "web"}

// TestTranslate runs the cases of the values admission sets
// (translate_values_test.go), of those it reads from ConfigMaps as params
// (translate_params_test.go), of the objects its policies select
// (translate_select_test.go) and of what it leaves to the controller
// (translate_controller_test.go).
func TestTranslate(t *testing.T) {
	tests := slices.Concat(valueTests, paramTests, selectTests, controllerTests)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := options()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			set := rulestest.Compile(t, tc.rules, served...)
			if err := set.ExcludeNamespaces(opts.ExcludeNamespaces); err != nil {
				t.Fatal(err)
			}
			policies, notes, err := Translate(set, opts)
			if err != nil {
				t.Fatalf("Translate() error = %v", err)
			}
			var names, gotNotes []string
			var compiledPolicies []*compiled
			for _, p := range policies {
				names = append(names, p.Rule)
				checkObjects(t, opts, p)
				compiledPolicies = append(compiledPolicies, compileBound(t, p))
			}
			for _, n := range notes {
				gotNotes = append(gotNotes, n.String())
			}
			if !slices.Equal(names, tc.policies) {
				t.Errorf("policies for rules %q, want %q", names, tc.policies)
			}
			if !slices.Equal(gotNotes, tc.notes) {
				t.Errorf("notes:\n%q\nwant\n%q", gotNotes, tc.notes)
			}
			for _, rq := range tc.requests {
				t.Run(rq.name, func(t *testing.T) { checkRequest(t, set, compiledPolicies, rq) })
			}
		})
	}
}

// checkObjects checks the names, labels and binding of p.
func checkObjects(t *testing.T, opts Options, p Policy) {
	t.Helper()
	want := map[string]string{ManagedByLabel: ManagedBy, FieldManagerLabel: opts.FieldManager, RuleLabel: p.Rule}
	name := opts.FieldManager + "." + p.Rule
	if ref := p.Binding.Spec.ParamRef; ref != nil {
		name += ".configmaps." + ref.Name
	}
	if p.Policy.Name != name || p.Binding.Name != name || p.Binding.Spec.PolicyName != name {
		t.Errorf("policy %q, binding %q for policy %q; want all %q", p.Policy.Name, p.Binding.Name, p.Binding.Spec.PolicyName, name)
	}
	if !maps.Equal(p.Policy.Labels, want) || !maps.Equal(p.Binding.Labels, want) {
		t.Errorf("labels %v and %v, want %v", p.Policy.Labels, p.Binding.Labels, want)
	}
	if *p.Policy.Spec.FailurePolicy != admissionregistrationv1.Ignore {
		t.Errorf("failurePolicy %v, want Ignore", *p.Policy.Spec.FailurePolicy)
	}
}

// checkRequest admits rq through the policies, in file order and in
// reverse (the API server's order is not defined), and checks the result:
// the annotations and labels wanted, and nothing left for the controller
// to write unless a policy failed.
func checkRequest(t *testing.T, set *rules.Set, policies []*compiled, rq request) {
	var results []metav1.Object
	reversed := slices.Clone(policies)
	slices.Reverse(reversed)
	for _, order := range [][]*compiled{policies, reversed} {
		obj, ignored := rq.obj, false
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: rq.ns}}
		if rq.nsIgnored {
			ns.Annotations = map[string]string{rulefile.IgnoreAnnotation: "true"}
		}
		if rq.gvr == namespaces {
			ns = nil
		}
		// Twice: a reinvocation changes nothing.
		for range 2 {
			for _, p := range order {
				out, _, err := p.run(t, admit{gvr: rq.gvr, obj: obj, old: rq.old, ns: ns, user: rq.user, configMaps: rq.configMaps})
				ignored = ignored || err != nil
				obj = out
			}
		}
		if ignored != rq.ignored {
			t.Errorf("a policy failed: %v, want %v", ignored, rq.ignored)
		}
		acc, _ := metaAccessor(obj)
		results = append(results, acc)
	}
	acc := results[0]
	if !maps.Equal(acc.GetAnnotations(), want(rq, true)) || !maps.Equal(acc.GetLabels(), want(rq, false)) {
		t.Errorf("after admission: annotations %v, labels %v; want %v, %v", acc.GetAnnotations(), acc.GetLabels(), want(rq, true), want(rq, false))
	}
	if !maps.Equal(acc.GetAnnotations(), results[1].GetAnnotations()) || !maps.Equal(acc.GetLabels(), results[1].GetLabels()) {
		t.Errorf("policies in reverse order: annotations %v, labels %v; in file order %v, %v",
			results[1].GetAnnotations(), results[1].GetLabels(), acc.GetAnnotations(), acc.GetLabels())
	}
	if rq.ignored || rq.unwatched {
		return
	}
	// What the controller would do next: nothing, for what was set.
	target := set.Targets[rq.gvr]
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(acc)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: u}
	ns := &metav1.ObjectMeta{Labels: rq.ns}
	if rq.nsIgnored {
		ns.Annotations = map[string]string{rulefile.IgnoreAnnotation: "true"}
	}
	d, err := reconcile.Decide(target, obj, lookup{ns: ns, configMaps: rq.configMaps}, reconcile.FieldManager)
	if err != nil {
		t.Fatal(err)
	}
	for k := range d.Change.Annotations {
		if !slices.Contains(rq.controller, k) {
			t.Errorf("the controller would still change annotation %s: %s", k, testutil.MustJSON(d.Change))
		}
	}
	for k := range d.Change.Labels {
		if !slices.Contains(rq.controllerLabels, k) {
			t.Errorf("the controller would still change label %s: %s", k, testutil.MustJSON(d.Change))
		}
	}
}

// lookup finds what the controller reads besides the object: its
// namespace, and the ConfigMaps of namespace "ns".
type lookup struct {
	ns         metav1.Object
	configMaps []*corev1.ConfigMap
}

func (l lookup) Find(src *source.Source, namespace, name string) (metav1.Object, bool) {
	if src == source.Namespace {
		return l.ns, true
	}
	for _, c := range l.configMaps {
		if src.Resource.GVR == configMaps && namespace == c.Namespace && name == c.Name {
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
			if err != nil {
				panic(err)
			}
			return &unstructured.Unstructured{Object: u}, true
		}
	}
	return nil, false
}

// want is what the request wants of annotations (or labels): unless it
// says, what the object had.
func want(rq request, anns bool) map[string]string {
	acc, _ := metaAccessor(rq.obj)
	switch {
	case anns && rq.wantAnns != nil:
		return rq.wantAnns
	case anns:
		return acc.GetAnnotations()
	case rq.wantLabels != nil:
		return rq.wantLabels
	}
	return acc.GetLabels()
}
