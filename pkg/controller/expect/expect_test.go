package expect

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

// recordWrite records a write from fromRV to toRV that is not inert.
func recordWrite(e *Echoes, k Key, fromRV, toRV string) {
	e.Record(k, fromRV, toRV, patch.Change{}, false)
}

func TestExpectations(t *testing.T) {
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	a := Key{configMaps, "ns", "a"}
	b := Key{configMaps, "ns", "b"}
	s := Key{secrets, "ns", "a"}
	// age backdates k's expectation by d.
	age := func(e *Echoes, k Key, d time.Duration) {
		exp := e.m[k.slot()]
		exp.at = now() - d
		e.m[k.slot()] = exp
	}
	type check struct {
		key  Key
		rv   string
		want bool
	}
	tests := []struct {
		name    string
		setup   func(e *Echoes)
		checks  []check // pending(key, rv), in order
		wantLen int     // outstanding expectations afterwards
	}{
		{"nothing recorded", func(*Echoes) {},
			[]check{{a, "1", false}}, 0},
		{"equal from and to RVs record nothing", func(e *Echoes) { recordWrite(e, a, "1", "1") },
			[]check{{a, "1", false}}, 0},
		{"pending for fromRV, and stays pending", func(e *Echoes) { recordWrite(e, a, "1", "2") },
			[]check{{a, "1", true}, {a, "1", true}}, 1},
		{"other key unaffected", func(e *Echoes) { recordWrite(e, a, "1", "2") },
			[]check{{b, "1", false}, {s, "1", false}}, 1},
		{"toRV clears", func(e *Echoes) { recordWrite(e, a, "1", "2") },
			[]check{{a, "2", false}, {a, "1", false}}, 0},
		{"any other RV clears", func(e *Echoes) { recordWrite(e, a, "5", "7") },
			[]check{{a, "6", false}, {a, "5", false}}, 0},
		{"later record replaces", func(e *Echoes) { recordWrite(e, a, "1", "2"); recordWrite(e, a, "2", "3") },
			[]check{{a, "2", true}}, 1},
		{"within TTL", func(e *Echoes) { recordWrite(e, a, "1", "2"); age(e, a, TTL-time.Second) },
			[]check{{a, "1", true}}, 1},
		{"TTL expired clears", func(e *Echoes) { recordWrite(e, a, "1", "2"); age(e, a, TTL+time.Second) },
			[]check{{a, "1", false}, {a, "1", false}}, 0},
		{"forget", func(e *Echoes) { recordWrite(e, a, "1", "2"); recordWrite(e, b, "1", "2"); e.Forget(a) },
			[]check{{a, "1", false}, {b, "1", true}}, 1},
		{"absent: a write of less than TTL ago still awaits its echo", func(e *Echoes) { recordWrite(e, a, "1", "2"); e.Absent(a) },
			[]check{{a, "1", true}}, 1},
		{"absent: an older write is dropped", func(e *Echoes) { recordWrite(e, a, "1", "2"); age(e, a, TTL+time.Second); e.Absent(a) },
			nil, 0},
		{"a write sweeps those older than TTL", func(e *Echoes) {
			recordWrite(e, a, "1", "2")
			age(e, a, TTL+time.Second)
			e.swept = now() - TTL
			recordWrite(e, b, "1", "2")
		}, []check{{b, "1", true}}, 1},
		{"a write sweeps at most once per TTL", func(e *Echoes) {
			recordWrite(e, a, "1", "2")
			age(e, a, TTL+time.Second)
			e.swept = now() - TTL + time.Second
			recordWrite(e, b, "1", "2")
		}, []check{{b, "1", true}}, 2},
		{"forget unknown key", func(e *Echoes) { recordWrite(e, a, "1", "2"); e.Forget(s) },
			[]check{{a, "1", true}}, 1},
		{"forgetResource drops only that resource", func(e *Echoes) {
			recordWrite(e, a, "1", "2")
			recordWrite(e, b, "3", "4")
			recordWrite(e, s, "1", "2")
			e.ForgetResource(configMaps)
		}, []check{{a, "1", false}, {b, "3", false}, {s, "1", true}}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := New()
			tc.setup(e)
			for _, c := range tc.checks {
				if got := e.Pending(c.key, c.rv); got != c.want {
					t.Errorf("pending(%s, %q) = %v, want %v", c.key, c.rv, got, c.want)
				}
			}
			if got := e.Len(); got != tc.wantLen {
				t.Errorf("len() = %d, want %d", got, tc.wantLen)
			}
		})
	}
}

// Once a burst of writes has had its echoes, the map that held their
// expectations is made anew: a Go map keeps the room of its largest size.
func TestShrink(t *testing.T) {
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	tests := []struct {
		name     string
		writes   int
		consume  func(e *Echoes, k Key)
		wantMost int // after every expectation is consumed
	}{
		{"a burst's echoes", shrinkFrom, func(e *Echoes, k Key) { e.Echo(k, version("1"), version("2")) }, 0},
		{"a burst's objects deleted", shrinkFrom, func(e *Echoes, k Key) { e.Forget(k) }, 0},
		{"a burst's syncs", shrinkFrom, func(e *Echoes, k Key) { e.Pending(k, "2") }, 0},
		{"a few writes: kept", shrinkFrom - 1, func(e *Echoes, k Key) { e.Echo(k, version("1"), version("2")) }, shrinkFrom - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := New()
			keys := make([]Key, tc.writes)
			for i := range keys {
				keys[i] = Key{cm, "ns", fmt.Sprint(i)}
				e.Record(keys[i], "1", "2", patch.Change{}, true)
			}
			for _, k := range keys {
				tc.consume(e, k)
			}
			if e.Len() != 0 || e.most != tc.wantMost {
				t.Errorf("after consuming every expectation: Len() = %d, most = %d; want 0 and %d", e.Len(), e.most, tc.wantMost)
			}
		})
	}
}

// version is an object at resourceVersion rv, with no annotations or labels.
func version(rv string) metav1.Object { return &metav1.ObjectMeta{ResourceVersion: rv} }

// BenchmarkEchoesHeap reports the heap Echoes keeps per write awaiting
// its echo, as a burst's writes do by the ten thousand: the names and
// resourceVersions are allocated apart, as the objects' are, and not
// counted.
func BenchmarkEchoesHeap(b *testing.B) {
	const n = 100000
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	names, rvs := make([]string, n), make([]string, n)
	for i := range n {
		names[i], rvs[i] = fmt.Sprintf("object-%06d", i), fmt.Sprint(1000000+i)
	}
	for b.Loop() {
		e := New()
		before := fixture.LiveHeap()
		for i := range n {
			e.Record(Key{configMaps, "ns", names[i]}, "1", rvs[i], patch.Change{}, true)
		}
		b.ReportMetric(float64(fixture.LiveHeap()-before)/n, "B/write")
		runtime.KeepAlive(e)
	}
}
