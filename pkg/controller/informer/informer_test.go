package informer

import (
	"slices"
	"testing"

	"k8s.io/client-go/tools/cache"
)

// An informer on standby passes no event on; once it serves, every one.
func TestUnlessStandby(t *testing.T) {
	for _, tc := range []struct {
		name    string
		standby bool
		want    []string
	}{
		{"serving", false, []string{"add a initial", "update a b", "delete b"}},
		{"on standby", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			h := cache.ResourceEventHandlerDetailedFuncs{
				AddFunc: func(obj any, initial bool) {
					e := "add " + obj.(string)
					if initial {
						e += " initial"
					}
					got = append(got, e)
				},
				UpdateFunc: func(old, obj any) { got = append(got, "update "+old.(string)+" "+obj.(string)) },
				DeleteFunc: func(obj any) { got = append(got, "delete "+obj.(string)) },
			}
			ri := &Informer{}
			ri.Standby.Store(tc.standby)
			w := ri.UnlessStandby(h)
			w.OnAdd("a", true)
			w.OnUpdate("a", "b")
			w.OnDelete("b")
			if !slices.Equal(got, tc.want) {
				t.Errorf("events passed on: %q, want %q", got, tc.want)
			}
		})
	}
}
