package metrics

import (
	"errors"
	"testing"

	"k8s.io/client-go/util/workqueue"
)

// Activity counts every object decided, whatever the result, and the keys
// the work queue holds, as its depth series does.
func TestActivity(t *testing.T) {
	m := New()
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "kube-annotator", MetricsProvider: m.Workqueue})
	defer q.ShutDown()
	tests := []struct {
		name        string
		do          func()
		wantDecided uint64
		wantQueued  int
	}{
		{"nothing yet", func() {}, 0, 0},
		{"three keys queued, one twice", func() { q.Add("a"); q.Add("b"); q.Add("c"); q.Add("a") }, 0, 3},
		{"one taken and synced", func() {
			k, _ := q.Get()
			m.CountSync("configmaps", nil)
			q.Done(k)
		}, 1, 2},
		{"a sync that failed counts too", func() { m.CountSync("configmaps", errors.New("boom")) }, 2, 2},
	}
	for _, tc := range tests {
		tc.do()
		if decided, queued := m.Activity.Read(); decided != tc.wantDecided || queued != tc.wantQueued {
			t.Errorf("%s: Read() = %d decided, %d queued; want %d and %d", tc.name, decided, queued, tc.wantDecided, tc.wantQueued)
		}
	}
}
