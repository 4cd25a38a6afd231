package reports

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
)

// BenchmarkReports measures the reports of 10,000 Pods, 30% of which
// lack a label their namespace's (source-missing), spread over 100
// namespaces or in one: the API writes and bytes applied to write them
// all, then in steady state (no write), then after 1% of the Pods, spread
// over the namespaces, change verdict; and the time to build and write them (the API server is a
// fake: its time is not counted). docs/performance.md quotes it.
func BenchmarkReports(b *testing.B) {
	const objects = 10000
	for _, namespaces := range []int{100, 1} {
		b.Run(fmt.Sprintf("namespaces=%d", namespaces), func(b *testing.B) {
			var initial, initialBytes, steady, churn, churnBytes int64
			for b.Loop() {
				client := newRecorder()
				store := NewStore()
				w := NewWriter(client, store, Options{FieldManager: "kube-annotator", Name: "kube-annotator", Interval: time.Hour, MaxResults: 1000, Synced: func() bool { return true }})
				key := func(i int) Key { return Key{pods, fmt.Sprintf("ns-%03d", i%namespaces), fmt.Sprintf("pod-%05d", i)} }
				for i := range objects {
					v := verdict(1)
					if i%10 < 3 {
						v = verdict(0, Finding{Rule: "team", Kind: "label", Key: "team", State: reconcile.StateSourceMissing,
							Why: fmt.Sprintf("fromNamespace: namespace %q has no label \"team\"", key(i).Namespace)})
					}
					v.UID = types.UID(fmt.Sprintf("6f1c2b9e-0000-4000-8000-%012d", i))
					store.Record(key(i), v)
				}
				w.Flush(context.Background())
				initial, initialBytes = w.Writes()
				w.Flush(context.Background())
				n, _ := w.Writes()
				steady = n - initial
				for j := range objects / 100 { // 1%, over the namespaces: one more key compliant
					i := j * 101
					v := verdict(2)
					v.UID = types.UID(fmt.Sprintf("6f1c2b9e-0000-4000-8000-%012d", i))
					store.Record(key(i), v)
				}
				w.Flush(context.Background())
				n2, bytes := w.Writes()
				churn, churnBytes = n2-n, bytes-initialBytes
			}
			b.ReportMetric(float64(initial), "writes/initial")
			b.ReportMetric(float64(initialBytes), "bytes/initial")
			b.ReportMetric(float64(steady), "writes/steady")
			b.ReportMetric(float64(churn), "writes/churn")
			b.ReportMetric(float64(churnBytes), "bytes/churn")
		})
	}
}
