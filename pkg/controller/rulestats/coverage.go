package rulestats

import (
	"iter"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/metrics"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/reports"
)

// buffers hold the coverage of the objects being recorded, so that an
// object synced again with the same verdict allocates nothing.
var buffers = sync.Pool{New: func() any { return new([]byte) }}

// coverageOf encodes the state of each key the rules set on obj, decided
// as d: "rule\x01kind\x01key\x01state\x00"…, in the order
// reconcile.Decision.Coverage gives them, so that one verdict is encoded
// one way; and counts them in v, the verdict of the reports.
func coverageOf(obj metav1.Object, d *reconcile.Decision, changed string, v *reports.Verdict) *[]byte {
	buf := buffers.Get().(*[]byte)
	b := (*buf)[:0]
	d.Coverage(obj, changed, func(k reconcile.KeyState) {
		b = append(append(append(append(append(append(append(append(b,
			k.Rule...), 1), k.Kind...), 1), k.Key...), 1), k.State...), 0)
		v.Count(k, d)
	})
	*buf = b
	return buf
}

// coverageBytes returns the encoded coverage of s.
func (s Object) coverageBytes() []byte {
	if s.coverage == nil {
		return nil
	}
	return *s.coverage
}

// release returns the buffer of s's coverage, which is not read again.
func (s Object) release() {
	if s.coverage != nil {
		buffers.Put(s.coverage)
	}
}

// keyStates yields the key states of an encoded coverage.
func keyStates(coverage string) iter.Seq[metrics.CoverageKey] {
	return func(yield func(metrics.CoverageKey) bool) {
		for entry := range names(coverage) {
			f := strings.SplitN(entry, "\x01", 4)
			if len(f) == 4 && !yield(metrics.CoverageKey{Rule: f[0], Kind: f[1], Key: f[2], State: f[3]}) {
				return
			}
		}
	}
}
