package metrics

import "github.com/prometheus/client_golang/prometheus"

// GuardMetrics describe rules reloads held by run --max-changes.
type GuardMetrics struct {
	// Held is 1 while a reload of the rules file is held, else 0.
	Held prometheus.Gauge
	// HeldChanges is, while a reload is held, the number of objects each
	// of its rules would change; no series when none is held.
	HeldChanges *prometheus.GaugeVec
	// HeldTotal counts reloads held.
	HeldTotal prometheus.Counter
}

func newGuardMetrics() GuardMetrics {
	return GuardMetrics{
		Held: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Name: "rules_reload_held",
			Help: "1 while a reload of the rules file is held because it would change more objects than --max-changes allows; the previous rules are in force.",
		}),
		HeldChanges: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "rules_reload_held_changes",
			Help: "While a reload is held, the objects each of its rules would change, by rule.",
		}, []string{"rule"}),
		HeldTotal: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Name: "rules_reloads_held_total",
			Help: "Reloads of the rules file held because they would change more objects than --max-changes allows.",
		}),
	}
}

func (g GuardMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{g.Held, g.HeldChanges, g.HeldTotal}
}
