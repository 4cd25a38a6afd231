package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

// What the soak's rules and its other writer put on objects.
const (
	// soakPrefix starts every annotation the rules set; no one else sets one.
	soakPrefix = "soak/"
	// managedKey is set by every generation of the rules; the other writer
	// tampers with it, and the controller must restore it.
	managedKey, managedValue = soakPrefix + "managed", "v1"
	// managedLabel is a label every generation sets.
	managedLabel = "soak-managed"
	// ownerKey is a foreign annotation every object is created with.
	ownerKey = "team/owner"
	// writerKey and writerLabel are the foreign keys the other writer sets.
	writerKey, writerLabel = "writer/n", "writer"
	// selectLabel selects objects for the rules: yes or no.
	selectLabel = "soak"
)

// soakRules are the rules of generation gen: every ConfigMap labelled
// soak=yes and every Frigate carries managedKey, managedLabel, and the two
// annotations soakExtras(gen). A reload from gen to gen+1 adds one key and
// removes another.
func soakRules(gen int) string {
	var extras []string
	for k, v := range soakExtras(gen) {
		extras = append(extras, fmt.Sprintf("%q: %q", k, v))
	}
	set := fmt.Sprintf("  annotations: {%q: %q, %s}\n  labels: {%s: \"yes\"}\n", managedKey, managedValue, strings.Join(extras, ", "), managedLabel)
	return "version: v1\nrules:\n- name: cms\n  resources: [configmaps]\n  selector: " + selectLabel + "=yes\n" + set +
		"- name: fleet\n  resources: [frigates.ship.nwiizo.dev]\n" + set
}

// soakExtras are the keys of generation gen besides managedKey.
func soakExtras(gen int) map[string]string {
	return map[string]string{
		fmt.Sprintf("%sextra-%d", soakPrefix, gen):   "on",
		fmt.Sprintf("%sextra-%d", soakPrefix, gen+1): "on",
	}
}

// soakWanted returns the soak annotations generation gen wants.
func soakWanted(gen int) map[string]string {
	want := soakExtras(gen)
	want[managedKey] = managedValue
	return want
}

// soakCarried returns the soak annotations obj carries.
func soakCarried(obj metav1.Object) map[string]string {
	got := map[string]string{}
	for k, v := range obj.GetAnnotations() {
		if strings.HasPrefix(k, soakPrefix) {
			got[k] = v
		}
	}
	return got
}

// convergedTo reports whether obj carries exactly what generation gen wants.
func convergedTo(obj metav1.Object, gen int) bool {
	return maps.Equal(soakCarried(obj), soakWanted(gen)) && obj.GetLabels()[managedLabel] == "yes"
}

// soakRef names one object the soak created.
type soakRef struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
}

// soakState is what the soak knows an object must carry besides what the
// rules want: the foreign keys as last written by someone else.
type soakState struct {
	selected bool
	// rv is the resourceVersion an unselected object was created with: no
	// one may write to it.
	rv string
	// writer is the value the other writer last wrote, "" if none;
	// unsure a value it sent later whose request failed without saying
	// whether the server applied it (cut short), "" if none.
	writer, unsure string
}

// soakModel is the soak's bookkeeping: the objects that exist and what
// they must carry, and the changes that needed a write by the controller.
type soakModel struct {
	mu   sync.Mutex
	live map[soakRef]*soakState
	// removedAt are when objects were deleted, by the key the audit log
	// knows them by.
	removedAt map[string]time.Time
	// listing is set while a reload lists the objects: listTampers are
	// then the objects tampered with that carried what the rules want,
	// counted once the list tells whether the reload counts them already.
	listing     bool
	listTampers []string
	// gen is the generation of the rules file in place.
	gen int
	// needed counts the changes that needed a write; see TestSoakChaos.
	needed atomic.Int64
	// tampered and foreign count the other writer's changes.
	tampered, foreign atomic.Int64
	// created and deleted count objects created and deleted after seeding.
	created, deleted atomic.Int64
	// unsureOps are the creates and deletes that may or may not have been
	// applied, until resolve asks the API server.
	unsureOps map[soakRef]unsureOp
}

func newSoakModel() *soakModel {
	return &soakModel{live: map[soakRef]*soakState{}, removedAt: map[string]time.Time{}, unsureOps: map[soakRef]unsureOp{}}
}

// generation returns the generation of the rules in place.
func (m *soakModel) generation() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.gen
}

// pick returns the n-th live selected object of gvr for which keep is
// true, counting round from n modulo their number; false if there is none.
func (m *soakModel) pick(n int, keep func(soakRef) bool) (soakRef, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var refs []soakRef
	for r, st := range m.live {
		if st.selected && keep(r) {
			refs = append(refs, r)
		}
	}
	if len(refs) == 0 {
		return soakRef{}, false
	}
	// Map order is random; sort-free picking is fine, the seed fixes the
	// schedule of faults, not which object each write lands on.
	return refs[n%len(refs)], true
}

// soakObject returns a ConfigMap or a Frigate named name in namespace,
// labelled soak=yes when selected, with the foreign ownerKey.
func soakObject(gvr schema.GroupVersionResource, namespace, name string, selected bool) *unstructured.Unstructured {
	sel := "no"
	if selected {
		sel = "yes"
	}
	u := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"k": "v"}}}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	if gvr == h.Frigates {
		u.Object = map[string]any{"spec": map[string]any{"foo": "bar"}}
		u.SetAPIVersion("ship.nwiizo.dev/v1beta1")
		u.SetKind("Frigate")
	}
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(map[string]string{selectLabel: sel})
	u.SetAnnotations(map[string]string{ownerKey: name})
	return u
}

// create creates an object and records it; selected ones need a write.
// A create that may have been applied though it failed waits for resolve.
func (m *soakModel) create(ctx context.Context, e *h.Env, ref soakRef, selected bool) error {
	obj, err := e.Dynamic.Resource(ref.gvr).Namespace(ref.namespace).Create(ctx, soakObject(ref.gvr, ref.namespace, ref.name, selected), metav1.CreateOptions{})
	if err != nil {
		if outcomeUnknown(err) {
			m.markUnsure(ref, unsureOp{create: true, st: &soakState{selected: selected}})
		}
		return fmt.Errorf("create %s %s/%s: %w", ref.gvr.Resource, ref.namespace, ref.name, err)
	}
	if selected {
		m.needed.Add(1)
	}
	m.mu.Lock()
	m.live[ref] = &soakState{selected: selected, rv: obj.GetResourceVersion()}
	m.mu.Unlock()
	return nil
}

// remove deletes a selected object. If it did not carry what the rules
// want, the write it needed will not happen: it no longer counts. A
// delete that may have been applied though it failed waits for resolve.
func (m *soakModel) remove(ctx context.Context, e *h.Env, ref soakRef) error {
	client := e.Dynamic.Resource(ref.gvr).Namespace(ref.namespace)
	obj, err := client.Get(ctx, ref.name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get %s/%s: %w", ref.namespace, ref.name, err)
	}
	m.mu.Lock()
	st := m.live[ref]
	delete(m.live, ref)
	m.removedAt[ref.key()] = time.Now()
	converged := convergedTo(obj, m.gen)
	m.mu.Unlock()
	if err := client.Delete(ctx, ref.name, metav1.DeleteOptions{}); err != nil {
		if outcomeUnknown(err) && st != nil {
			m.markUnsure(ref, unsureOp{st: st, converged: converged})
		}
		return fmt.Errorf("delete %s/%s: %w", ref.namespace, ref.name, err)
	}
	if !converged {
		m.needed.Add(-1)
	}
	return nil
}

// write is one change of the other writer to a selected object: it sets
// the foreign writerKey and writerLabel to n, or, if tamper, changes
// managedKey to another value if the object carries it as the rules want,
// which the controller must then restore: a needed change if the object
// carried everything the rules want (otherwise the write it still needs
// restores the key too). An object deleted meanwhile is skipped.
func (m *soakModel) write(ctx context.Context, e *h.Env, ref soakRef, n int, tamper bool) error {
	client := e.Dynamic.Resource(ref.gvr).Namespace(ref.namespace)
	var body map[string]any
	needs := false
	if tamper {
		obj, err := client.Get(ctx, ref.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil || obj.GetAnnotations()[managedKey] != managedValue {
			return err
		}
		body = map[string]any{"annotations": map[string]any{managedKey: fmt.Sprintf("tampered-%d", n)}}
		needs = convergedTo(obj, m.generation())
	} else {
		v := fmt.Sprint(n)
		body = map[string]any{"annotations": map[string]any{writerKey: v}, "labels": map[string]any{writerLabel: v}}
	}
	data, err := json.Marshal(map[string]any{"metadata": body})
	if err != nil {
		return err
	}
	_, err = client.Patch(ctx, ref.name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: "soak-writer"})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		if !tamper {
			m.unsure(ref, fmt.Sprint(n))
		}
		return fmt.Errorf("writer: patch %s/%s: %w", ref.namespace, ref.name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if tamper {
		switch {
		case needs && m.listing:
			m.listTampers = append(m.listTampers, ref.key())
		case needs:
			m.needed.Add(1)
		}
		m.tampered.Add(1)
		return nil
	}
	m.foreign.Add(1)
	if st, ok := m.live[ref]; ok {
		st.writer, st.unsure = fmt.Sprint(n), ""
	}
	return nil
}

// unsure records v as a value of the foreign keys of ref that the server
// may or may not have applied.
func (m *soakModel) unsure(ref soakRef, v string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.live[ref]; ok {
		st.unsure = v
	}
}

// listSoak lists the objects of gvr in the soak's namespaces.
func listSoak(ctx context.Context, e *h.Env, gvr schema.GroupVersionResource, namespaces []string) ([]unstructured.Unstructured, error) {
	var out []unstructured.Unstructured
	for _, ns := range namespaces {
		list, err := e.Dynamic.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list %s in %s: %w", gvr.Resource, ns, err)
		}
		out = append(out, list.Items...)
	}
	return out, nil
}

// converged counts the selected objects in objs that carry what the rules
// of generation gen want.
func converged(objs []unstructured.Unstructured, gen int) int {
	n := 0
	for i := range objs {
		if objs[i].GetLabels()[selectLabel] == "yes" && convergedTo(&objs[i], gen) {
			n++
		}
	}
	return n
}

// servedPatches is how many PATCH requests to ConfigMaps and Frigates the
// API server served with success, as it counts them itself: from every
// client, whether or not the client saw the answer.
func servedPatches(t *testing.T, e *h.Env) int64 {
	t.Helper()
	n := 0.0
	for _, resource := range []string{"configmaps", "frigates"} {
		v, err := e.ServerMetric(t.Context(), "apiserver_request_total", map[string]string{"verb": "PATCH", "resource": resource, "code": "200"})
		if err != nil {
			t.Fatal(err)
		}
		n += v
	}
	return int64(n)
}

// logWrong logs, for each object that does not carry what the rules of
// generation gen want, its metadata with its managedFields, and the
// controller's log lines that name it: what a failure needs to be
// understood once the run is gone.
func logWrong(t *testing.T, p *proc.Process, objs []*unstructured.Unstructured, gen int) {
	t.Helper()
	log := strings.Split(p.Output(t), "\n")
	for _, o := range objs {
		meta, _ := yaml.Marshal(o.Object["metadata"])
		ref := o.GetNamespace() + "/" + o.GetName()
		var lines []string
		for _, l := range log {
			if strings.Contains(l, ref) {
				lines = append(lines, l)
			}
		}
		// A line each, so that a filter of the test's output by file name
		// (make test-faults) keeps them all.
		t.Logf("%s %s does not carry what the rules of generation %d want; its metadata:", o.GetKind(), ref, gen)
		for l := range strings.SplitSeq(strings.TrimSpace(string(meta)), "\n") {
			t.Logf("  %s", l)
		}
		t.Logf("the controller's log lines naming %s (%d, the last %d):", ref, len(lines), min(len(lines), maxWrongLogLines))
		for _, l := range lines[max(0, len(lines)-maxWrongLogLines):] {
			t.Logf("  %s", l)
		}
	}
}

// maxWrongLogLines bounds the controller's log lines logWrong logs per
// object.
const maxWrongLogLines = 40
