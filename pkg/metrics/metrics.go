// Package metrics defines kube-annotator's Prometheus metrics. Every label
// value that can occur is initialised at start, so that series exist (at
// zero) before the first event and alerts on rate() work from the start.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

const namespace = "kube_annotator"

// Reload results.
const (
	Success = "success"
	Failure = "failure"
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
	// Informers is the number of running informers, one per ruled resource.
	Informers prometheus.Gauge
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
			Help: "Running informers, one per ruled resource.",
		}),
	}
	for _, r := range []string{Success, Failure} {
		m.RulesReloads.WithLabelValues(r)
	}
	m.Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.RulesReloads, m.RulesLastReloadSuccessful, m.Rules, m.ResourcesUnresolved, m.Informers,
	)
	return m
}
