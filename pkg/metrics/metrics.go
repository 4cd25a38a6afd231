package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/util/workqueue"
)

const namespace = "kube_annotator"

// Results: of a reload (Success, Failure), of a sync or write (Success, Error).
const (
	Success = "success"
	Failure = "failure"
	Error   = "error"
)

// Metrics are the collectors of one process, in their own registry.
type Metrics struct {
	// Registry holds every collector, plus Go and process metrics.
	Registry *prometheus.Registry

	// RulesReloads counts attempts to load the rules file, by result.
	RulesReloads *prometheus.CounterVec
	// RulesLastReloadSuccessful is 1 when the last load of the rules file
	// succeeded and 0 when the file in place is invalid (the previous rules
	// are still enforced).
	RulesLastReloadSuccessful prometheus.Gauge
	// Rules is the number of rules in force.
	Rules prometheus.Gauge
	// ResourcesUnresolved is the number of resource names in the rules that
	// the API server does not serve.
	ResourcesUnresolved prometheus.Gauge
	// Informers is the number of running informers: one per ruled
	// resource, and one per resource being pruned.
	Informers prometheus.Gauge
	// InformersSynced is the number of informers whose cache has synced.
	InformersSynced prometheus.Gauge
	// ListWatchErrors counts failed lists and watches of informers, by
	// resource and the API server's reason (Forbidden, NotFound, Expired,
	// …; Unknown when there is no answer), so that a resource the
	// controller may not read shows up by name.
	ListWatchErrors *prometheus.CounterVec
	// Syncs counts syncs of one object, by resource and result.
	Syncs *prometheus.CounterVec
	// Writes counts write requests, by resource and result.
	Writes *prometheus.CounterVec
	// Conflicts counts syncs in which two selected rules wanted different
	// values for one key, by resource.
	Conflicts *prometheus.CounterVec
	// PrunePending is 1, by resource and reason, for a recorded resource
	// that no rule names any more until the keys the controller set there
	// are removed: the reason is one of PruneReasons. It is 0 otherwise.
	PrunePending *prometheus.GaugeVec
	// Leader is 1 while this process holds the leader lease (or runs
	// without leader election), else 0.
	Leader prometheus.Gauge
	// PerRule are the metrics labelled by rule, and the opted-out objects.
	PerRule RuleMetrics
	// Guard describe reloads held by --max-changes.
	Guard GuardMetrics
	// Fight describe objects another writer keeps reverting.
	Fight FightMetrics
	// Record describe the writes to the record of the resources written to.
	Record RecordMetrics
	// Workqueue provides the work queue's metrics to client-go.
	Workqueue workqueue.MetricsProvider
	// Activity counts the objects decided and the keys queued.
	Activity *Activity
}

// New returns the metrics, registered in a new registry.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		RulesReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "rules_reloads_total",
			Help: "Loads of the rules file, by result (success or failure).",
		}, []string{"result"}),
		RulesLastReloadSuccessful: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "rules_last_reload_successful",
			Help: "1 if the last load of the rules file succeeded; 0 if the file is invalid and the previous rules are still enforced.",
		}),
		Rules: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "rules",
			Help: "Rules in force.",
		}),
		ResourcesUnresolved: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "resources_unresolved",
			Help: "Resource names in the rules that the API server does not serve (retried).",
		}),
		Informers: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "informers",
			Help: "Running informers, one per ruled resource and one per resource being pruned.",
		}),
		InformersSynced: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "informers_synced",
			Help: "Running informers whose cache has synced.",
		}),
		ListWatchErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "list_watch_errors_total",
			Help: "Failed lists and watches of informers, by resource and the API server's reason (Forbidden, NotFound, Expired, …; Unknown when it did not answer).",
		}, []string{"resource", "reason"}),
		Syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "syncs_total",
			Help: "Syncs of one object, by resource and result (success or error).",
		}, []string{"resource", "result"}),
		Writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "writes_total",
			Help: "Write requests to the API server, by resource and result (success or error).",
		}, []string{"resource", "result"}),
		Conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "rule_conflicts_total",
			Help: "Syncs in which two selected rules wanted different values for one key (file order decided), by resource.",
		}, []string{"resource"}),
		PrunePending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "prune_pending",
			Help: "1 for a recorded resource no rule names until the keys set there are removed, by resource and reason: " +
				"Pruning (under way), NotServed (its CRD is deleted; kept in the record) or Forbidden (RBAC denies listing or patching it).",
		}, []string{"resource", "reason"}),
		Leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "leader",
			Help: "1 while this process holds the leader lease or runs without leader election.",
		}),
	}
	m.PerRule = newRuleMetrics()
	m.Registry.MustRegister(m.PerRule.collectors()...)
	m.Guard = newGuardMetrics()
	m.Registry.MustRegister(m.Guard.collectors()...)
	m.Fight = newFightMetrics()
	m.Registry.MustRegister(m.Fight.collectors()...)
	m.Record = newRecordMetrics()
	m.Registry.MustRegister(m.Record.collectors()...)
	m.Activity = &Activity{}
	wq := newWorkqueueMetrics(&m.Activity.queued)
	m.Workqueue = wq
	for _, r := range []string{Success, Failure} {
		m.RulesReloads.WithLabelValues(r)
	}
	m.Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.RulesReloads, m.RulesLastReloadSuccessful, m.Rules, m.ResourcesUnresolved, m.Informers,
		m.InformersSynced, m.ListWatchErrors, m.Syncs, m.Writes, m.Conflicts, m.PrunePending, m.Leader,
	)
	m.Registry.MustRegister(wq.collectors()...)
	return m
}

// InitResource creates the series of resource at zero, so that they exist
// before its first sync.
func (m *Metrics) InitResource(resource string) {
	for _, r := range []string{Success, Error} {
		m.Syncs.WithLabelValues(resource, r)
		m.Writes.WithLabelValues(resource, r)
	}
	m.Conflicts.WithLabelValues(resource)
	m.Fight.Fighting.WithLabelValues(resource)
	for _, scope := range []string{ScopeObject, ScopeNamespace} {
		m.PerRule.Ignored.WithLabelValues(resource, scope)
	}
	for _, reason := range ListWatchErrorReasons {
		m.ListWatchErrors.WithLabelValues(resource, reason)
	}
	m.SetPrunePending(resource, "")
}

// Reasons of kube_annotator_prune_pending.
const (
	// PruneRunning: the resource is being pruned.
	PruneRunning = "Pruning"
	// PruneNotServed: the server does not serve the resource (its CRD was
	// deleted); it stays in the record until it is served again or the
	// user removes it.
	PruneNotServed = "NotServed"
	// PruneForbidden: the controller may not list or patch the resource.
	PruneForbidden = "Forbidden"
)

// PruneReasons are the reasons of kube_annotator_prune_pending.
var PruneReasons = []string{PruneRunning, PruneNotServed, PruneForbidden}

// SetPrunePending sets kube_annotator_prune_pending of resource to 1 for
// reason and to 0 for the other reasons; reason "" sets every reason to 0.
func (m *Metrics) SetPrunePending(resource, reason string) {
	for _, r := range PruneReasons {
		v := 0.0
		if r == reason {
			v = 1
		}
		m.PrunePending.WithLabelValues(resource, r).Set(v)
	}
}

// ListWatchErrorReasons are the reasons of kube_annotator_list_watch_errors_total
// whose series exist at zero from the start; others appear when they occur.
var ListWatchErrorReasons = []string{"Forbidden", "NotFound", "Expired", "Unknown"}

// Count adds one to the series of vec, a count of syncs or writes, for
// resource and err's result (Success or Error).
func Count(vec *prometheus.CounterVec, resource string, err error) {
	result := Success
	if err != nil {
		result = Error
	}
	vec.WithLabelValues(resource, result).Inc()
}
