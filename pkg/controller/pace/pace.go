package pace

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"k8s.io/utils/clock"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
)

// Pacer paces the writes of each tenant's rules. The zero rate (the
// default, and without a tenants section) paces none, as a nil Pacer
// does. It is safe for the workers to use at once.
type Pacer struct {
	clock clock.PassiveClock
	paced *prometheus.CounterVec

	mu      sync.Mutex
	perSec  int
	tenants map[string]bool          // the namespaces whose tenants have rules
	buckets map[string]*rate.Limiter // by tenant
	turns   map[any]time.Time        // the turns reserved, by queued item
	sweepAt int                      // how many turns make sweep look next
}

// New returns a Pacer that reads the time from clk and counts the writes
// it makes wait in paced, by tenant (NewMetrics); paced may be nil.
func New(clk clock.PassiveClock, paced *prometheus.CounterVec) *Pacer {
	return &Pacer{clock: clk, paced: paced, buckets: map[string]*rate.Limiter{}, turns: map[any]time.Time{}}
}

// NewMetrics registers the count of writes a Pacer makes wait with reg.
func NewMetrics(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kube_annotator_tenant_writes_paced_total",
		Help: "Writes that changed keys of a tenant's rules and waited their turn in the tenant's writesPerSecond, by the tenant's namespace.",
	}, []string{"namespace"})
	reg.MustRegister(c)
	return c
}

// Set sets how many objects each tenant's rules may have changed per
// second, in a burst of as many (0 paces none), and the namespaces whose
// tenants have rules in force. A new rate starts every tenant with a full
// bucket.
func (p *Pacer) Set(perSecond int, tenants []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tenants = make(map[string]bool, len(tenants))
	for _, ns := range tenants {
		p.tenants[ns] = true
	}
	if perSecond == p.perSec {
		return
	}
	p.perSec = perSecond
	clear(p.buckets)
	clear(p.turns)
	p.sweepAt = 0
}

// Wait is asked before a write of decision d to obj, an object of
// namespace, queued as item: it returns how long the write must wait for
// its tenant's turn, 0 to write now. Only a write in a namespace whose
// tenant has rules waits, and only when it changes a key of one of them
// or deletes a key no rule wants any more: the controller does not
// record which rule set a key, and so counts the deletions in a tenant's
// namespace as the tenant's.
func (p *Pacer) Wait(item any, namespace string, d reconcile.Decision, obj patch.Object) time.Duration {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	perSec, tenant := p.perSec, p.tenants[namespace]
	p.mu.Unlock()
	if perSec == 0 || !tenant || !byTenant(namespace, d, obj) {
		return 0
	}
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if turn, ok := p.turns[item]; ok {
		if !now.Before(turn) {
			delete(p.turns, item)
			return 0
		}
		return turn.Sub(now)
	}
	b := p.buckets[namespace]
	if b == nil {
		b = rate.NewLimiter(rate.Limit(perSec), perSec)
		p.buckets[namespace] = b
	}
	wait := b.ReserveN(now, 1).DelayFrom(now)
	if wait <= 0 {
		return 0
	}
	p.sweep(now)
	p.turns[item] = now.Add(wait)
	if p.paced != nil {
		p.paced.WithLabelValues(namespace).Inc()
	}
	return wait
}

// sweep drops the turns passed a minute ago that were never taken: the
// object came back with nothing of its tenant's to write, or was deleted.
func (p *Pacer) sweep(now time.Time) {
	if len(p.turns) < max(p.sweepAt, 1024) {
		return
	}
	for item, turn := range p.turns {
		if now.Sub(turn) > time.Minute {
			delete(p.turns, item)
		}
	}
	p.sweepAt = 2 * len(p.turns)
}

// byTenant reports whether d changes a key of a rule of namespace's
// tenant, or deletes a key no rule wants. A tenant's rules are named
// "namespace/rule" (package tenants); no rule of the main file has a
// slash in its name.
func byTenant(namespace string, d reconcile.Decision, obj patch.Object) bool {
	prefix := namespace + "/"
	for _, ch := range d.Changes(obj) {
		if ch.Rule == "" || strings.HasPrefix(ch.Rule, prefix) {
			return true
		}
	}
	return false
}
