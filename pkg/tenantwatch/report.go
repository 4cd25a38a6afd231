package tenantwatch

import (
	"context"
	"encoding/json"
	"maps"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/tenants"
)

// Metrics are the tenants' gauges and counters.
type Metrics struct {
	// Rules counts each tenant's rules, by namespace and state: in_force,
	// refused (the rules of a file that cannot be read count refused) or
	// held (the rules of a new file held by maxChanges).
	Rules *prometheus.GaugeVec
	// StatusWrites counts the status annotations written, by result.
	StatusWrites *prometheus.CounterVec
}

// NewMetrics returns the tenants' metrics, registered with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Rules: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "kube_annotator", Name: "tenant_rules",
			Help: "Rules of each tenant's rules file, by namespace and state (in_force, refused, held: those of a new file held by maxChanges)."}, []string{"namespace", "state"}),
		StatusWrites: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kube_annotator", Name: "tenant_status_writes_total",
			Help: "Status annotations written on tenants' ConfigMaps, by result."}, []string{"result"}),
	}
	for _, r := range []string{"success", "error"} {
		m.StatusWrites.WithLabelValues(r)
	}
	reg.MustRegister(m.Rules, m.StatusWrites)
	return m
}

// reporter tells tenants what of their files is in force: the status
// annotation on the ConfigMap, an Event on it when something is refused,
// and the metrics. It writes a status only when it changed.
type reporter struct {
	client       kubernetes.Interface
	fieldManager string
	metrics      *Metrics

	once     sync.Once
	recorder events.EventRecorder
	mu       sync.Mutex
	written  map[string]string // ConfigMap's UID → status last written
}

func newReporter(client kubernetes.Interface, fieldManager string, m *Metrics) *reporter {
	return &reporter{client: client, fieldManager: fieldManager, metrics: m, written: map[string]string{}}
}

func (r *reporter) report(ctx context.Context, results []tenants.Result) {
	r.metrics.Rules.Reset()
	logger := klog.FromContext(ctx)
	current := map[string]bool{}
	for _, res := range results {
		current[res.UID] = true
	}
	r.mu.Lock()
	maps.DeleteFunc(r.written, func(uid, _ string) bool { return !current[uid] })
	r.mu.Unlock()
	for _, res := range results {
		refused := res.Total - res.InForce()
		if res.Err != nil && res.Total == 0 {
			refused = 1 // a file not read counts as one rule refused
		}
		r.metrics.Rules.WithLabelValues(res.Namespace, "in_force").Set(float64(res.InForce()))
		r.metrics.Rules.WithLabelValues(res.Namespace, "refused").Set(float64(refused))
		held := 0
		if res.Held != nil {
			held = res.Held.Rules
		}
		r.metrics.Rules.WithLabelValues(res.Namespace, "held").Set(float64(held))
		status, key := res.Status(), res.UID
		r.mu.Lock()
		same := r.written[key] == status
		r.mu.Unlock()
		if same {
			continue
		}
		cm, err := r.write(ctx, res, status)
		if err != nil {
			r.metrics.StatusWrites.WithLabelValues("error").Inc()
			logger.Error(err, "Writing the status of a tenant's rules file", "configMap", klog.KRef(res.Namespace, res.ConfigMap))
			continue
		}
		r.metrics.StatusWrites.WithLabelValues("success").Inc()
		r.mu.Lock()
		r.written[key] = status
		r.mu.Unlock()
		switch {
		case res.Held != nil:
			r.event(ctx, cm, "TenantRulesHeld", status)
		case refused > 0:
			r.event(ctx, cm, "TenantRulesRefused", status)
		}
		logger.Info("Tenant's rules file read", "configMap", klog.KRef(res.Namespace, res.ConfigMap), "inForce", res.InForce(), "refused", refused)
	}
}

// write sets the status annotation of the tenant's ConfigMap: a merge
// patch, which, unlike an apply, never creates a ConfigMap deleted since.
func (r *reporter) write(ctx context.Context, res tenants.Result, status string) (*corev1.ConfigMap, error) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{tenants.StatusAnnotation: status}}})
	if err != nil {
		return nil, err
	}
	return r.client.CoreV1().ConfigMaps(res.Namespace).Patch(ctx, res.ConfigMap, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: r.fieldManager})
}

// event records a Warning on the ConfigMap saying what was refused or held.
func (r *reporter) event(ctx context.Context, cm *corev1.ConfigMap, reason, status string) {
	r.once.Do(func() {
		b := events.NewBroadcaster(&events.EventSinkImpl{Interface: r.client.EventsV1()})
		if err := b.StartRecordingToSinkWithContext(context.WithoutCancel(ctx)); err != nil {
			klog.FromContext(ctx).Error(err, "Recording events on tenants' ConfigMaps")
			return
		}
		r.recorder = b.NewRecorder(scheme.Scheme, "kube-annotator")
	})
	if r.recorder != nil {
		r.recorder.Eventf(cm, nil, corev1.EventTypeWarning, reason, "Check", "%s", status)
	}
}
