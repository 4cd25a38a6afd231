package tenants

import (
	"strings"
	"testing"
)

func TestConfirmed(t *testing.T) {
	f := File{Data: []byte("rules: []\n")}
	for _, tc := range []struct {
		name, confirm string
		want          bool
	}{
		{"none", "", false},
		{"its digest", Digest(f), true},
		{"another file's", Digest(File{Data: []byte("rules: [x]\n")}), false},
		{"the whole hash's prefix, too short", Digest(f)[:6], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.Confirm = tc.confirm
			if got := f.Confirmed(); got != tc.want {
				t.Errorf("Confirmed() with %q = %v, want %v", tc.confirm, got, tc.want)
			}
		})
	}
}

// A held file keeps the rules in force before it, and its status says
// how many objects it would change and how to confirm it.
func TestHold(t *testing.T) {
	lim := limits()
	prev := Check(lim, File{Namespace: "a", ConfigMap: "cm", UID: "1", Data: []byte("rules:\n- {name: one, resources: [pods], labels: {team: a}}\n")})
	next := Check(lim, File{Namespace: "a", ConfigMap: "cm", UID: "1", Data: []byte("rules:\n- {name: one, resources: [pods], labels: {team: a}}\n- {name: two, resources: [pods], labels: {team: b}}\n")})
	for _, tc := range []struct {
		name      string
		prev      *Result
		wantRules int
	}{
		{"rules before", &prev, 1},
		{"a new tenant", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held := Hold(tc.prev, next, 700, 500)
			if held.InForce() != tc.wantRules || held.UID != "1" {
				t.Errorf("held in force %d rules of ConfigMap %q, want %d of the ConfigMap held", held.InForce(), held.UID, tc.wantRules)
			}
			status := held.Status()
			for _, want := range []string{"held: the new file's 2 rules would change 700 objects", "tenants.maxChanges 500", ConfirmAnnotation + "=" + Digest(next.File)} {
				if !strings.Contains(status, want) {
					t.Errorf("status %q does not say %q", status, want)
				}
			}
		})
	}
}
