package retry

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"k8s.io/klog/v2/ktesting"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestFailureLog(t *testing.T) {
	keyA, keyB, keyC := objKey{"configmaps", "ns", "a"}, objKey{"configmaps", "ns", "b"}, objKey{"configmaps", "ns", "c"}
	keyS := objKey{"secrets", "ns", "s"}
	// failEvery fails key with errors e0, e1, … once a second, n times,
	// the first at once.
	failEvery := func(key objKey, n int) []logStep {
		var steps []logStep
		for i := range n {
			if i > 0 {
				steps = append(steps, logStep{wait: time.Second})
			}
			steps = append(steps, logStep{key: key, err: fmt.Errorf("e%d", i)})
		}
		return steps
	}
	tests := []struct {
		name  string
		steps []logStep
		want  []string
	}{
		{"the first failure is logged at once",
			[]logStep{{key: keyA, err: errors.New("refused")}},
			[]string{"Sync failed; will retry: refused key=configmaps.v1 ns/a retries=0"}},
		{"failures within the interval are summarised when it ends",
			[]logStep{{key: keyA, err: errors.New("e0")}, {wait: time.Second}, {key: keyB, err: errors.New("e1")},
				{wait: time.Second}, {key: keyC, err: errors.New("e2")}, {wait: 7 * time.Second}},
			[]string{"Sync failed; will retry: e0 key=configmaps.v1 ns/a retries=0"}},
		{"the summary comes when the interval ends",
			[]logStep{{key: keyA, err: errors.New("e0")}, {wait: time.Second}, {key: keyB, err: errors.New("e1")},
				{wait: time.Second}, {key: keyC, err: errors.New("e2")}, {wait: 8 * time.Second}},
			[]string{"Sync failed; will retry: e0 key=configmaps.v1 ns/a retries=0",
				"Syncs failed; will retry: e2 resource=configmaps failures=2 interval=10s lastKey=configmaps.v1 ns/c"}},
		{"each resource is logged apart",
			[]logStep{{key: keyA, err: errors.New("e0")}, {key: keyS, err: errors.New("e1")}, {key: keyB, err: errors.New("e2")},
				{wait: 10 * time.Second}},
			[]string{"Sync failed; will retry: e0 key=configmaps.v1 ns/a retries=0",
				"Sync failed; will retry: e1 key=secrets.v1 ns/s retries=0",
				"Syncs failed; will retry: e2 resource=configmaps failures=1 interval=10s lastKey=configmaps.v1 ns/b"}},
		{"after a quiet interval the next failure is logged at once",
			[]logStep{{key: keyA, err: errors.New("e0")}, {wait: 10 * time.Second}, {key: keyB, err: errors.New("e1"), retries: 3}},
			[]string{"Sync failed; will retry: e0 key=configmaps.v1 ns/a retries=0",
				"Sync failed; will retry: e1 key=configmaps.v1 ns/b retries=3"}},
		{"failures without end: one line per interval",
			append(failEvery(keyA, 31), logStep{wait: 10 * time.Second}),
			[]string{"Sync failed; will retry: e0 key=configmaps.v1 ns/a retries=0",
				"Syncs failed; will retry: e9 resource=configmaps failures=9 interval=10s lastKey=configmaps.v1 ns/a",
				"Syncs failed; will retry: e19 resource=configmaps failures=10 interval=10s lastKey=configmaps.v1 ns/a",
				"Syncs failed; will retry: e29 resource=configmaps failures=10 interval=10s lastKey=configmaps.v1 ns/a",
				"Syncs failed; will retry: e30 resource=configmaps failures=1 interval=10s lastKey=configmaps.v1 ns/a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
			clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
			l := NewFailureLog(clk, 10*time.Second)
			for _, s := range tc.steps {
				if s.wait > 0 {
					clk.Step(s.wait)
					continue
				}
				l.Failed(logger, s.key.resource, s.key, s.err, s.retries)
			}
			var got []string
			for _, e := range logger.GetSink().(ktesting.Underlier).GetBuffer().Data() {
				line := fmt.Sprintf("%s: %v", e.Message, e.Err)
				for i := 0; i+1 < len(e.ParameterKVList); i += 2 {
					line += fmt.Sprintf(" %v=%v", e.ParameterKVList[i], e.ParameterKVList[i+1])
				}
				got = append(got, line)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("logged\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// logStep is a failure for FailureLog, or time passing.
type logStep struct {
	key     objKey
	err     error
	retries int
	wait    time.Duration
}

// objKey names an object of a resource as the controller's queue key
// does in logs.
type objKey struct{ resource, namespace, name string }

func (k objKey) String() string { return k.resource + ".v1 " + k.namespace + "/" + k.name }
