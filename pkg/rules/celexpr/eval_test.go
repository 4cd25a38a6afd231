package celexpr

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// memoExprs read fields every way walkReads knows: selections, has(),
// optional selections, constant indexes and "in" on maps, through fields
// that may be missing, null, of another type, or lists; of the object and
// of its namespace.
var memoExprs = []string{
	"object.spec.replicas > 2",
	"has(object.spec.paused) && object.spec.paused",
	"object.metadata.labels['tier'] == 'web'",
	"'tier' in object.metadata.labels",
	"object.metadata.namespace + '/' + object.metadata.name",
	"object.spec.template.metadata.labels.app",
	"string(object.spec.replicas)",
	"string(object.spec.replicas + 1)",
	"object.?spec.?strategy.?type.orValue('none')",
	"namespaceObject.metadata.labels['env']",
	"namespaceObject == null ? 'none' : namespaceObject.metadata.name",
	"object.spec.containers.size() > 1",
	"object.kind + ' ' + object.apiVersion",
	"object.metadata.annotations['note']",
	"object.metadata.uid",
	"object.spec.replicas.Value",
	"dyn([object.spec.replicas])",
	"'constant'",
}

// memoObjects returns n objects drawn at random from few shapes, so that
// many share what an expression reads and many differ in it: whole
// objects, and objects as a metadata cache keeps them.
func memoObjects(r *rand.Rand, n int) []metav1.Object {
	pick := func(vs ...any) any { return vs[r.IntN(len(vs))] }
	var out []metav1.Object
	for range n {
		meta := &metav1.ObjectMeta{Name: pick("a", "b", "c").(string), Namespace: pick("", "team", "unknown").(string),
			UID: "u-1"}
		if l := pick(nil, map[string]string{}, map[string]string{"tier": "web"}, map[string]string{"tier": "db"}); l != nil {
			meta.Labels = l.(map[string]string)
		}
		if r.IntN(2) == 0 {
			meta.Annotations = map[string]string{"note": "n"}
		}
		if r.IntN(4) == 0 {
			out = append(out, &metav1.PartialObjectMetadata{ObjectMeta: *meta,
				TypeMeta: pick(metav1.TypeMeta{}, metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}).(metav1.TypeMeta)})
			continue
		}
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetName(meta.Name)
		u.SetNamespace(meta.Namespace)
		u.SetLabels(meta.Labels)
		u.SetAnnotations(meta.Annotations)
		if r.IntN(2) == 0 {
			u.SetAPIVersion("apps/v1")
			u.SetKind("Deployment")
		}
		spec := map[string]any{}
		for k, v := range map[string]any{
			"replicas":   pick(nil, int64(1), int64(3), float64(3), "3", map[string]any{"value": int64(1)}, "none"),
			"paused":     pick(nil, true, false, "none"),
			"strategy":   pick(map[string]any{"type": "Recreate"}, map[string]any{}, "none"),
			"template":   pick(map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "x"}}}, map[string]any{"metadata": map[string]any{}}, map[string]any{"metadata": "m"}, "none"),
			"containers": pick([]any{map[string]any{}}, []any{map[string]any{}, map[string]any{}}, "none"),
		} {
			if v != "none" {
				spec[k] = v
			}
		}
		if r.IntN(5) > 0 {
			u.Object["spec"] = spec
		}
		out = append(out, u)
	}
	return out
}

// TestEvalOnMemo checks that what an expression yields through its memo
// is what a fresh evaluation yields, value and error, for objects that
// share what it reads and objects that do not, evaluated from many
// goroutines at once with one memo per expression.
func TestEvalOnMemo(t *testing.T) {
	namespaces := source.Namespaces(func(name string) (metav1.Object, bool) {
		if name == "unknown" {
			return nil, false
		}
		return &metav1.ObjectMeta{Name: name, Labels: map[string]string{"env": "prod"}}, true
	})
	objs := memoObjects(rand.New(rand.NewPCG(1, 2)), 400)
	for _, src := range memoExprs {
		t.Run(src, func(t *testing.T) {
			e, err := Compile(src, StringType)
			if err != nil {
				if e, err = Compile(src, BoolType); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					for i := g; i < 2*len(objs); i += 4 {
						obj := objs[i%len(objs)]
						for _, isNamespace := range []bool{false, true} {
							got, gotErr := e.EvalOn(obj, isNamespace, namespaces)
							want, wantErr := freshEval(e, obj, isNamespace, namespaces)
							if !reflect.DeepEqual(got, want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
								t.Errorf("%T %+v (namespace: %t): evalOn() = %#v, %v; want %#v, %v", obj, obj, isNamespace, got, gotErr, want, wantErr)
							}
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

// freshEval evaluates e on obj without its memo.
func freshEval(e *Expr, obj metav1.Object, isNamespace bool, namespaces source.Namespaces) (any, error) {
	vars, err := Input(obj, isNamespace, namespaces, e)
	if err != nil {
		return nil, err
	}
	return e.eval(vars)
}

// TestEvalOnKeepsScalars checks which results the memo keeps: those of
// expressions that read scalars or missing fields, not those that read a
// list or the labels whole, nor results other than scalars.
func TestEvalOnKeepsScalars(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"tier": "web"}},
		"spec":     map[string]any{"replicas": int64(3), "containers": []any{map[string]any{}}},
	}}
	tests := []struct {
		src  string
		kept bool
	}{
		{"object.spec.replicas > 2", true},
		{"object.spec.missing.deeper == 1", true},
		{"object.metadata.labels.tier", true},
		{"object.spec.containers.size() > 0", false},
		{"object.metadata.labels.size() > 0", false},
		{"object.metadata.labels.tier + string(object.spec.replicas)", true},
		{"dyn([object.spec.replicas])", false},
		{"object.spec.replicas.Value == 1", false},
	}
	for _, tc := range tests {
		e, err := Compile(tc.src, BoolType)
		if err != nil {
			if e, err = Compile(tc.src, StringType); err != nil {
				t.Fatal(err)
			}
		}
		_, _ = e.EvalOn(obj, false, nil)
		if kept := len(e.memo.new) > 0; kept != tc.kept {
			t.Errorf("%s: kept = %t, want %t", tc.src, kept, tc.kept)
		}
	}
}

// TestMemoBounds checks that a memo keeps at most twice its bound, and
// that a key used between others stays.
func TestMemoBounds(t *testing.T) {
	m := Memo[int]{Max: 3}
	for i := range 100 {
		m.Put(fmt.Sprint("k", i), i)
		if _, ok := m.Get([]byte("hot")); !ok {
			m.Put("hot", -1)
		}
		if n := len(m.new) + len(m.old); n > 2*m.Max {
			t.Fatalf("after %d puts: %d kept, want at most %d", i+1, n, 2*m.Max)
		}
	}
	if v, ok := m.Get([]byte("hot")); !ok || v != -1 {
		t.Errorf("get(hot) = %d, %t; want -1, true", v, ok)
	}
	if _, ok := m.Get([]byte("k0")); ok {
		t.Errorf("get(k0) found a key put 100 puts ago")
	}
	if v, ok := m.Get([]byte("k99")); !ok || v != 99 {
		t.Errorf("get(k99) = %d, %t; want 99, true", v, ok)
	}
}

// TestMemoDeclines checks that a memo whose keys are never asked twice
// declines to be asked for a while once a generation filled, and that one
// whose keys come back does not.
func TestMemoDeclines(t *testing.T) {
	lookups := func(m *Memo[int], n int, key func(i int) string) (declined int) {
		for i := range n {
			if !m.Use() {
				declined++
				continue
			}
			k := key(i)
			if _, ok := m.Get([]byte(k)); !ok {
				m.Put(k, i)
			}
		}
		return declined
	}
	unique := &Memo[int]{Max: 100}
	if d := lookups(unique, 201, func(i int) string { return fmt.Sprint(i) }); d != 0 {
		t.Errorf("unique keys: %d of the first 201 lookups declined, want 0", d)
	}
	if d := lookups(unique, 800, func(i int) string { return fmt.Sprint("x", i) }); d != 800 {
		t.Errorf("unique keys: %d of the next 800 lookups declined, want all", d)
	}
	if !unique.Use() {
		t.Errorf("unique keys: use() = false after 800 declined")
	}
	recurring := &Memo[int]{Max: 100}
	if d := lookups(recurring, 5000, func(i int) string { return fmt.Sprint(i % 150) }); d != 0 {
		t.Errorf("recurring keys: %d of 5,000 lookups declined, want 0", d)
	}
}
