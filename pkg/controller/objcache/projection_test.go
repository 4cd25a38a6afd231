package objcache

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/projection"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// realistic returns the i-th of many ConfigMaps' metadata as a metadata
// informer decodes it: ten labels, kubectl's last-applied-configuration
// (about 3 KB), Helm's annotations and managedFields entries of kubectl,
// Helm and, when annotated, this controller, which set annotation a.
func realistic(i int, annotated bool) *metav1.PartialObjectMetadata {
	name := fmt.Sprintf("web-%06d", i)
	lbls := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/instance": "web",
		"app.kubernetes.io/version": "1.2.3", "app.kubernetes.io/component": "frontend", "app.kubernetes.io/part-of": "shop",
		"app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "web-1.2.3", "team": "payments", "env": "prod", "tier": "web"}
	anns := map[string]string{"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 3000),
		"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "shop", "deployment.kubernetes.io/revision": "3"}
	var ownedByUs []string
	mf := []metav1.ManagedFieldsEntry{
		fixture.OwnedFields("kubectl-client-side-apply", []string{"kubectl.kubernetes.io/last-applied-configuration"}, sets.List(sets.KeySet(lbls))),
		fixture.OwnedFields("helm", []string{"meta.helm.sh/release-name", "meta.helm.sh/release-namespace"}, []string{"app.kubernetes.io/managed-by"}),
	}
	if annotated {
		anns["a"] = "1"
		ownedByUs = []string{"a"}
		mf = append(mf, fixture.OwnedFields(reconcile.FieldManager, ownedByUs, nil))
	}
	for j := range mf {
		mf[j].Time = &metav1.Time{Time: time.Unix(1700000000, 0)}
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: string([]byte("shop")), UID: types.UID(fmt.Sprintf("6a1c2a77-4cf5-4d1e-9f7e-%012d", i)),
		ResourceVersion: fmt.Sprint(1000 + i), Generation: 3, CreationTimestamp: metav1.Now(),
		Labels: lbls, Annotations: anns, ManagedFields: mf,
	}}
}

func TestProject(t *testing.T) {
	keep := &projection.Projection{Annotations: sets.New("a", "gone"), Labels: sets.New("app")}
	anns := map[string]string{"a": "1", "old": "o", "user": "u"}
	lbls := map[string]string{"app": "web", "mine": "m", "theirs": "t"}
	ours := []metav1.ManagedFieldsEntry{fixture.OwnedFields(reconcile.FieldManager, []string{"old"}, []string{"mine"})}
	marker := patch.MarkerKey(reconcile.FieldManager, rulestest.ConfigMaps.GVR.GroupResource())
	marked := map[string]string{"a": "1", "set": "s", "user": "u", marker: "set,label:marked"}
	tests := []struct {
		name               string
		keep               *projection.Projection
		anns, lbls         map[string]string
		own                []metav1.ManagedFieldsEntry
		wantAnns, wantLbls map[string]string
		wantDropped        int
	}{
		{"named keys only", keep, anns, lbls, nil, map[string]string{"a": "1"}, map[string]string{"app": "web"}, 4},
		{"and the keys we own", keep, anns, lbls, ours,
			map[string]string{"a": "1", "old": "o"}, map[string]string{"app": "web", "mine": "m"}, 2},
		{"nothing kept", keep, map[string]string{"user": "u"}, map[string]string{"theirs": "t"}, nil, nil, nil, 2},
		{"no annotations, no labels", keep, nil, nil, ours, nil, nil, 0},
		{"the admission marker and the keys it lists", keep, marked, map[string]string{"marked": "m", "theirs": "t"}, nil,
			map[string]string{"a": "1", "set": "s", marker: "set,label:marked"}, map[string]string{"marked": "m"}, 2},
		{"everything when keep is nil", nil, anns, lbls, nil, anns, lbls, 0},
		{"everything when keep is whole", &projection.Projection{Whole: true}, anns, lbls, nil, anns, lbls, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gotAnns, gotLbls, dropped := newProjector(tc.keep, reconcile.FieldManager, rulestest.ConfigMaps).project(tc.anns, tc.lbls, tc.own, nil)
			if len(gotAnns)+len(tc.wantAnns) > 0 && !reflect.DeepEqual(gotAnns, tc.wantAnns) ||
				len(gotLbls)+len(tc.wantLbls) > 0 && !reflect.DeepEqual(gotLbls, tc.wantLbls) {
				t.Errorf("project() = %v, %v; want %v, %v", gotAnns, gotLbls, tc.wantAnns, tc.wantLbls)
			}
			if len(dropped) != tc.wantDropped || !slices.IsSorted(dropped) {
				t.Errorf("project() dropped %d keys (sorted: %v), want %d", len(dropped), slices.IsSorted(dropped), tc.wantDropped)
			}
		})
	}
}

// Ownership is read from managedFields only when a key would be dropped.
func TestKeepKeysReadsOwnershipOnlyWhenNeeded(t *testing.T) {
	calls := 0
	owned := func() map[string]bool { calls++; return map[string]bool{"b": true} }
	m := map[string]string{"a": "1"}
	if got, _ := keepKeys(m, sets.New("a"), nil, owned, annotationSeed, nil); !reflect.DeepEqual(got, m) || calls != 0 {
		t.Errorf("keepKeys() = %v after %d ownership reads, want %v after none", got, calls, m)
	}
	if got, _ := keepKeys(map[string]string{"a": "1", "b": "2", "c": "3"}, sets.New("a"), nil, owned, annotationSeed, nil); !reflect.DeepEqual(got, map[string]string{"a": "1", "b": "2"}) || calls != 1 {
		t.Errorf("keepKeys() = %v after %d ownership reads, want a and b after one", got, calls)
	}
}

// The cache of a realistic object keeps what the rules name and what we
// own; the transform is idempotent, as an informer that streams its list
// needs; and equal projections share one map.
func TestMetadataTransformProjects(t *testing.T) {
	keep := &projection.Projection{Annotations: sets.New("a"), Labels: sets.New("team")}
	transform := MetadataTransform(reconcile.FieldManager, rulestest.ConfigMaps, keep, NewInterner())
	once := func(obj any) *cachedMetadata {
		t.Helper()
		out, err := transform(obj)
		if err != nil {
			t.Fatalf("MetadataTransform() error = %v", err)
		}
		return out.(*cachedMetadata)
	}
	in := realistic(1, true)
	got := once(in.DeepCopy())
	want := &cachedMetadata{proj: got.proj,
		name: in.Name, namespace: in.Namespace, uid: in.UID, resourceVersion: in.ResourceVersion,
		annotations: map[string]string{"a": "1"}, labels: map[string]string{"team": "payments"},
		managedFields: []metav1.ManagedFieldsEntry{{Manager: reconcile.FieldManager, Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsType: "FieldsV1", FieldsV1: in.ManagedFields[2].FieldsV1}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MetadataTransform() =\n%s\nwant\n%s", testutil.MustJSON(got), testutil.MustJSON(want))
	}
	if got.proj.by.all || len(got.proj.dropped) != 13 || got.proj.by.kind.gvk.Kind != "ConfigMap" {
		t.Errorf("MetadataTransform() kept %+v, want a projector of ConfigMaps that dropped 13 keys", got.proj)
	}
	if again := once(got); !reflect.DeepEqual(again, got) {
		t.Errorf("MetadataTransform() is not idempotent:\n%s\nthen\n%s", testutil.MustJSON(got), testutil.MustJSON(again))
	}
	if unannotated := once(realistic(1, false)); unannotated.annotations != nil || !reflect.DeepEqual(unannotated.managedFields, otherManagersOnly) {
		t.Errorf("MetadataTransform() of an object we never wrote = %s, want no annotations and the other managers' marker", testutil.MustJSON(unannotated))
	}
	other := once(realistic(2, true))
	for what, pair := range map[string][2]any{
		"annotations":   {got.annotations, other.annotations},
		"labels":        {got.labels, other.labels},
		"managedFields": {got.managedFields, other.managedFields},
		"projections":   {got.proj, other.proj},
	} {
		if reflect.ValueOf(pair[0]).UnsafePointer() != reflect.ValueOf(pair[1]).UnsafePointer() {
			t.Errorf("two objects keep two equal %s, want one shared", what)
		}
	}
	if unsafe.StringData(got.namespace) != unsafe.StringData(other.namespace) {
		t.Errorf("two objects keep two copies of their namespace, want one shared")
	}
}

func TestRelevantUpdateProjected(t *testing.T) {
	keep := &projection.Projection{Annotations: sets.New("a"), Labels: sets.New("team")}
	transform := MetadataTransform(reconcile.FieldManager, rulestest.ConfigMaps, keep, NewInterner())
	cached := func(f func(m *metav1.PartialObjectMetadata)) any {
		m := realistic(1, true)
		f(m)
		out, err := transform(m)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	same := cached(func(*metav1.PartialObjectMetadata) {})
	tests := []struct {
		name   string
		change func(m *metav1.PartialObjectMetadata)
		want   bool
	}{
		{"a key outside the projection", func(m *metav1.PartialObjectMetadata) {
			m.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
			m.Labels["app.kubernetes.io/version"] = "2"
		}, false},
		{"an annotation the rules set", func(m *metav1.PartialObjectMetadata) { m.Annotations["a"] = "2" }, true},
		{"a label a selector reads, added", func(m *metav1.PartialObjectMetadata) { delete(m.Labels, "team") }, true},
		{"a key we own", func(m *metav1.PartialObjectMetadata) {
			m.Annotations["mine"] = "1"
			m.ManagedFields[2] = fixture.OwnedFields(reconcile.FieldManager, []string{"a", "mine"}, nil)
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RelevantUpdate(same, cached(tc.change)); got != tc.want {
				t.Errorf("RelevantUpdate() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestInterner(t *testing.T) {
	in := NewInterner()
	a, b := map[string]string{"k": "v", "l": "w"}, map[string]string{"l": "w", "k": "v"}
	if got := in.stringMap(b); reflect.ValueOf(in.stringMap(a)).UnsafePointer() != reflect.ValueOf(got).UnsafePointer() {
		t.Errorf("two equal maps are not shared")
	}
	if in.stringMap(map[string]string{"k": "x", "l": "w"})["k"] != "x" {
		t.Errorf("a map with another value is shared with the first")
	}
	// Keys and values are told apart: {"ab": ""} is not {"a": "b"}.
	if got := in.stringMap(map[string]string{"ab": ""}); got["ab"] != "" || len(in.stringMap(map[string]string{"a": "b"})) != 1 {
		t.Errorf("maps whose concatenations are equal are mixed up")
	}
	if in.stringMap(map[string]string{}) != nil {
		t.Errorf("an empty map is kept, want nil")
	}
	large := map[string]string{"k": strings.Repeat("v", maxInternedSize)}
	in.stringMap(large)
	if _, ok := in.maps[string(appendString(appendString(nil, "k"), large["k"]))]; ok {
		t.Errorf("a map larger than %d bytes is held", maxInternedSize)
	}
	for i := range maxInterned + 1 {
		in.string(fmt.Sprint(i))
	}
	if n := len(in.strings); n > maxInterned {
		t.Errorf("the Interner holds %d strings, want at most %d", n, maxInterned)
	}
}

// BenchmarkCachedObjectHeap reports the heap an informer's store holds per
// cached realistic object (kube-annotator's transform and store, no
// informer machinery), for the projection of a rule that sets annotation
// a, and without projection.
func BenchmarkCachedObjectHeap(b *testing.B) {
	const n = 20000
	for _, tc := range []struct {
		name string
		keep *projection.Projection
	}{
		{"projected", &projection.Projection{Annotations: sets.New("a"), Labels: sets.New[string]()}},
		{"all keys", nil},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				transform := MetadataTransform(reconcile.FieldManager, rulestest.ConfigMaps, tc.keep, NewInterner())
				store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
				before := fixture.LiveHeap()
				for i := range n {
					obj, err := transform(realistic(i, true))
					if err != nil {
						b.Fatal(err)
					}
					if err := store.Add(obj); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(fixture.LiveHeap()-before)/n, "B/object")
				runtime.KeepAlive(store)
			}
		})
	}
}
