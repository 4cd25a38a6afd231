package tenantwatch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
	"github.com/kube-annotator/kube-annotator/pkg/tenants"
)

// ErrNotSynced is Files' error when the caches did not fill within the
// wait: the ConfigMaps or Namespaces could not be listed.
var ErrNotSynced = errors.New("the tenants' ConfigMaps and Namespaces are not listed yet")

// Watch caches the tenants' rules files: the ConfigMaps the tenants
// section names, and, when it selects namespaces by label, the
// Namespaces. Changed tells when what Files returns may have changed.
type Watch struct {
	client  kubernetes.Interface
	changed chan struct{}
	wait    time.Duration

	mu sync.Mutex
	// scope is what the informers select; stop ends them.
	scope      scope
	stop       context.CancelFunc
	configMaps cache.SharedIndexInformer
	namespaces cache.SharedIndexInformer // nil when every namespace may
	status     *reporter
}

// scope is what of a tenants section the informers depend on.
type scope struct {
	configMap, configMapSelector, key, namespaceSelector string
}

func scopeOf(t *spec.Tenants) scope {
	return scope{t.ConfigMap, t.ConfigMapSelector, t.Key, t.NamespaceSelector}
}

// New returns a Watch that lists and watches through client, and writes
// the status of each tenant's file as fieldManager (record.StatusWriter:
// never the controller's own, which owns the keys its rules set and would
// prune the status as one no rule wants); wait bounds how long
// Files waits for its caches to fill.
func New(client kubernetes.Interface, fieldManager string, wait time.Duration, m *Metrics) *Watch {
	return &Watch{client: client, changed: make(chan struct{}, 1), wait: wait, status: newReporter(client, fieldManager, m)}
}

// Changed receives when a tenant's file, or a namespace's labels, changed.
func (w *Watch) Changed() <-chan struct{} { return w.changed }

func (w *Watch) signal() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// Stop ends the informers; Files starts them again.
func (w *Watch) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stop != nil {
		w.stop()
		w.stop, w.configMaps, w.namespaces = nil, nil, nil
	}
}

// Files returns the tenants' files that limits find, one per namespace
// the section admits (the first ConfigMap by name, when a selector finds
// several), starting the informers, or starting them again when limits
// select other objects than they do, under ctx. It waits for their caches
// to fill at most the Watch's wait, then returns ErrNotSynced.
func (w *Watch) Files(ctx context.Context, limits *spec.Tenants) ([]tenants.File, error) {
	cms, nss := w.informers(ctx, limits)
	wctx, cancel := context.WithTimeout(ctx, w.wait)
	defer cancel()
	synced := []cache.InformerSynced{cms.HasSynced}
	if nss != nil {
		synced = append(synced, nss.HasSynced)
	}
	if !cache.WaitForCacheSync(wctx.Done(), synced...) {
		return nil, ErrNotSynced
	}
	admitted := func(string) bool { return true }
	if nss != nil {
		sel, err := labels.Parse(limits.NamespaceSelector)
		if err != nil {
			return nil, fmt.Errorf("tenants.namespaceSelector: %w", err)
		}
		admitted = func(ns string) bool {
			obj, ok, _ := nss.GetStore().GetByKey(ns)
			return ok && sel.Matches(labels.Set(obj.(*corev1.Namespace).Labels))
		}
	}
	var found []*corev1.ConfigMap
	for _, obj := range cms.GetStore().List() {
		found = append(found, obj.(*corev1.ConfigMap))
	}
	return tenants.Pick(limits, found, admitted), nil
}

// informers returns the informers of the scope limits select, started
// under ctx; the namespaces' is nil when every namespace is admitted.
func (w *Watch) informers(ctx context.Context, limits *spec.Tenants) (cms, nss cache.SharedIndexInformer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := scopeOf(limits)
	if w.stop != nil && w.scope == s {
		return w.configMaps, w.namespaces
	}
	if w.stop != nil {
		w.stop()
	}
	ictx, stop := context.WithCancel(ctx)
	w.scope, w.stop = s, stop
	w.configMaps = w.configMapInformer(s)
	go w.configMaps.RunWithContext(ictx)
	w.namespaces = nil
	if s.namespaceSelector != "" {
		w.namespaces = w.namespaceInformer()
		go w.namespaces.RunWithContext(ictx)
	}
	klog.FromContext(ctx).V(2).Info("Watching tenants' rules files", "configMap", s.configMap, "configMapSelector", s.configMapSelector,
		"namespaceSelector", s.namespaceSelector)
	return w.configMaps, w.namespaces
}

func (w *Watch) configMapInformer(s scope) cache.SharedIndexInformer {
	limits := &spec.Tenants{ConfigMap: s.configMap, ConfigMapSelector: s.configMapSelector}
	narrow := func(o *metav1.ListOptions) { tenants.ListOptions(limits, o) }
	lw := cache.NewFilteredListWatchFromClient(w.client.CoreV1().RESTClient(), "configmaps", metav1.NamespaceAll, narrow)
	inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.signal() },
		DeleteFunc: func(any) { w.signal() },
		UpdateFunc: func(old, cur any) {
			o, c := old.(*corev1.ConfigMap), cur.(*corev1.ConfigMap)
			od, ook := o.Data[s.key]
			cd, cok := c.Data[s.key]
			// Not the status the controller writes: the file, or the
			// tenant's confirmation of a file held.
			confirm := tenants.ConfirmAnnotation
			if od != cd || ook != cok || o.Annotations[confirm] != c.Annotations[confirm] {
				w.signal()
			}
		},
	})
	return inf
}

func (w *Watch) namespaceInformer() cache.SharedIndexInformer {
	lw := cache.NewListWatchFromClient(w.client.CoreV1().RESTClient(), "namespaces", metav1.NamespaceAll, fields.Everything())
	inf := cache.NewSharedIndexInformer(lw, &corev1.Namespace{}, 0, cache.Indexers{})
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.signal() },
		DeleteFunc: func(any) { w.signal() },
		UpdateFunc: func(old, cur any) {
			if !maps.Equal(old.(*corev1.Namespace).Labels, cur.(*corev1.Namespace).Labels) {
				w.signal()
			}
		},
	})
	return inf
}

// Report tells each tenant what of its file is in force (see reporter).
func (w *Watch) Report(ctx context.Context, results []tenants.Result) {
	w.status.report(ctx, results)
}
