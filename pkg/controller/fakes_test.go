package controller

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Fakes of what the prune tests need: a record, a resolver, an informer
// that has synced.

// fakeRecord is a Record whose "cluster" copy is stored: Load reads it.
type fakeRecord struct {
	mu        sync.Mutex
	stored    map[schema.GroupResource]bool
	known     map[schema.GroupResource]bool
	ensureErr error
	removes   int
}

func newRecord(grs ...schema.GroupResource) *fakeRecord {
	r := &fakeRecord{stored: map[schema.GroupResource]bool{}, known: map[schema.GroupResource]bool{}}
	for _, gr := range grs {
		r.stored[gr], r.known[gr] = true, true
	}
	return r
}

func (r *fakeRecord) Ensure(_ context.Context, gr schema.GroupResource) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ensureErr != nil {
		return r.ensureErr
	}
	r.stored[gr], r.known[gr] = true, true
	return nil
}

func (r *fakeRecord) Recorded() []schema.GroupResource {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Collect(maps.Keys(r.known))
	slices.SortFunc(out, func(a, b schema.GroupResource) int { return strings.Compare(a.String(), b.String()) })
	return out
}

func (r *fakeRecord) Remove(_ context.Context, gr schema.GroupResource) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removes++
	delete(r.stored, gr)
	delete(r.known, gr)
	return nil
}

func (r *fakeRecord) Load(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.known = maps.Clone(r.stored)
	return nil
}

func (r *fakeRecord) Ref() string { return "ns/test-resources" }

// has reports whether the cluster's copy lists gr.
func (r *fakeRecord) has(gr schema.GroupResource) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stored[gr]
}

// forget removes gr from the cluster's copy, as a user editing it would.
func (r *fakeRecord) forget(gr schema.GroupResource) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.stored, gr)
}

// fakeResolver resolves configmaps and namespaces, unless it hides them.
type fakeResolver struct {
	mu     sync.Mutex
	hidden schema.GroupResource
	resets int
}

func (f *fakeResolver) ResolveGroupResource(gr schema.GroupResource) (source.Resource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if gr == f.hidden {
		return source.Resource{}, errors.New("not served")
	}
	return resolve(gr.Resource)
}

// serve stops hiding a resource.
func (f *fakeResolver) serve() {
	f.mu.Lock()
	f.hidden = schema.GroupResource{}
	f.mu.Unlock()
}

func (f *fakeResolver) Reset() {
	f.mu.Lock()
	f.resets++
	f.mu.Unlock()
}

// synced makes the informer of r one that has synced, over the same
// store.
func synced(r *resource) {
	r.informer.Informer = syncedInformer{r.informer.Informer}
}

// syncedInformer is an informer whose cache has synced.
type syncedInformer struct{ cache.SharedIndexInformer }

func (syncedInformer) HasSynced() bool { return true }
