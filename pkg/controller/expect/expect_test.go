package expect

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestExpectations(t *testing.T) {
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	a := Key{configMaps, "ns", "a"}
	b := Key{configMaps, "ns", "b"}
	s := Key{secrets, "ns", "a"}
	// age backdates k's expectation by d.
	age := func(e *Echoes, k Key, d time.Duration) {
		exp := e.m[k]
		exp.at = time.Now().Add(-d)
		e.m[k] = exp
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
		{"equal from and to RVs record nothing", func(e *Echoes) { e.Record(a, "1", "1", false) },
			[]check{{a, "1", false}}, 0},
		{"pending for fromRV, and stays pending", func(e *Echoes) { e.Record(a, "1", "2", false) },
			[]check{{a, "1", true}, {a, "1", true}}, 1},
		{"other key unaffected", func(e *Echoes) { e.Record(a, "1", "2", false) },
			[]check{{b, "1", false}, {s, "1", false}}, 1},
		{"toRV clears", func(e *Echoes) { e.Record(a, "1", "2", false) },
			[]check{{a, "2", false}, {a, "1", false}}, 0},
		{"any other RV clears", func(e *Echoes) { e.Record(a, "5", "7", false) },
			[]check{{a, "6", false}, {a, "5", false}}, 0},
		{"later record replaces", func(e *Echoes) { e.Record(a, "1", "2", false); e.Record(a, "2", "3", false) },
			[]check{{a, "2", true}}, 1},
		{"within TTL", func(e *Echoes) { e.Record(a, "1", "2", false); age(e, a, TTL-time.Second) },
			[]check{{a, "1", true}}, 1},
		{"TTL expired clears", func(e *Echoes) { e.Record(a, "1", "2", false); age(e, a, TTL+time.Second) },
			[]check{{a, "1", false}, {a, "1", false}}, 0},
		{"forget", func(e *Echoes) { e.Record(a, "1", "2", false); e.Record(b, "1", "2", false); e.Forget(a) },
			[]check{{a, "1", false}, {b, "1", true}}, 1},
		{"forget unknown key", func(e *Echoes) { e.Record(a, "1", "2", false); e.Forget(s) },
			[]check{{a, "1", true}}, 1},
		{"forgetResource drops only that resource", func(e *Echoes) {
			e.Record(a, "1", "2", false)
			e.Record(b, "3", "4", false)
			e.Record(s, "1", "2", false)
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
		{"a burst's echoes", shrinkFrom, func(e *Echoes, k Key) { e.Echo(k, "2") }, 0},
		{"a burst's objects deleted", shrinkFrom, func(e *Echoes, k Key) { e.Forget(k) }, 0},
		{"a burst's syncs", shrinkFrom, func(e *Echoes, k Key) { e.Pending(k, "2") }, 0},
		{"a few writes: kept", shrinkFrom - 1, func(e *Echoes, k Key) { e.Echo(k, "2") }, shrinkFrom - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := New()
			keys := make([]Key, tc.writes)
			for i := range keys {
				keys[i] = Key{cm, "ns", fmt.Sprint(i)}
				e.Record(keys[i], "1", "2", true)
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
