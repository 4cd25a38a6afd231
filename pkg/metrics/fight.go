package metrics

import "github.com/prometheus/client_golang/prometheus"

// FightMetrics describe objects whose keys another writer keeps reverting
// (see package fight).
type FightMetrics struct {
	// Fights counts fights started, by the rule that wants a key fought
	// over (rule="" for a key no rule wants any more) and the other field
	// manager. Its series appear with the first fight: the managers are
	// not known before.
	Fights *prometheus.CounterVec
	// Fighting is the number of objects in a fight, by resource; its
	// series exist at zero from the start.
	Fighting *prometheus.GaugeVec
}

func newFightMetrics() FightMetrics {
	return FightMetrics{
		Fights: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "fights_total",
			Help: "Objects found in a fight (other field managers revert what a rule sets, so the controller set one key to one value more than 3 times in 60s), by rule and other field manager: once per fight for each of the first 3 managers seen in it.",
		}, []string{"rule", "manager"}),
		Fighting: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "fighting_objects",
			Help: "Objects in a fight, whose writes back off, by resource; a fight ends 10m after the object's last write of a key fought over.",
		}, []string{"resource"}),
	}
}

func (f FightMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{f.Fights, f.Fighting}
}
