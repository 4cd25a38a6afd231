package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// CoverageStates are the states of kube_annotator_rule_coverage_objects,
// in order: reconcile.States.
var CoverageStates = []string{"compliant", "pending", "foreign", "source-missing", "invalid", "error", "opted-out", "fighting", "unrecorded"}

// CoverageKey names one series of kube_annotator_rule_coverage_objects:
// a rule, the kind ("annotation" or "label") and key it sets, and a state.
type CoverageKey struct {
	Rule, Kind, Key, State string
}

// Coverage is kube_annotator_rule_coverage_objects: the objects on which
// each rule's key is in each state, as last synced. It shows nothing until
// the caches have synced (so that alerts do not fire at start), and only
// the rules in force. A rule's key that no object counts for has no
// series; one that some object counts for has a series for every state.
type Coverage struct {
	desc *prometheus.Desc

	mu     sync.Mutex
	counts map[CoverageKey]float64
	rules  map[string]bool
	synced bool
}

func newCoverage() *Coverage {
	return &Coverage{
		desc: prometheus.NewDesc(namespace+"_rule_coverage_objects",
			"Objects on which a rule's annotation or label key is in a state, as last synced, by rule, kind (annotation or label), key and state: "+
				"compliant, pending, foreign, source-missing, invalid, error, opted-out or fighting. Absent until the caches have synced.",
			[]string{"rule", "kind", "key", "state"}, nil),
		counts: map[CoverageKey]float64{},
	}
}

// Add adds delta to the objects counted for k.
func (c *Coverage) Add(k CoverageKey, delta float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.counts[k] + delta; n != 0 {
		c.counts[k] = n
	} else {
		delete(c.counts, k)
	}
}

// SetRules says which rules are in force: the series of the others go,
// while their objects are counted until they are synced again.
func (c *Coverage) SetRules(names []string) {
	rules := make(map[string]bool, len(names))
	for _, n := range names {
		rules[n] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rules = rules
}

// SetSynced says whether the caches have synced: the series show only then.
func (c *Coverage) SetSynced(synced bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.synced = synced
}

// Describe implements prometheus.Collector.
func (c *Coverage) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *Coverage) Collect(ch chan<- prometheus.Metric) {
	type ruleKey struct{ rule, kind, key string }
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.synced {
		return
	}
	keys := map[ruleKey]bool{}
	for k := range c.counts {
		if c.rules[k.Rule] {
			keys[ruleKey{k.Rule, k.Kind, k.Key}] = true
		}
	}
	for k := range keys {
		for _, state := range CoverageStates {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, c.counts[CoverageKey{k.rule, k.kind, k.key, state}], k.rule, k.kind, k.key, state)
		}
	}
}
