// Package metrics defines kube-annotator's Prometheus metrics. Every label
// value that can occur is initialised at start, so that series exist (at
// zero) before the first event and alerts on rate() work from the start.
//
// Start at New (metrics.go), which builds Metrics: the controller's
// counters and gauges, with RuleMetrics (rules.go), FightMetrics
// (fight.go), GuardMetrics (guard.go) and the work queue's
// (workqueue.go) beside them. docs/metrics.md lists each series.
// Activity (activity.go) counts, besides the series, the objects decided
// and the keys queued, for the process to tell a burst of work from the
// quiet after it.
//
// Layer "base" of deps_test.go: it imports no other package of this
// module; the packages that count import it, never the other way.
package metrics
