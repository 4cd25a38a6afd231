package reloader

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
	"github.com/kube-annotator/kube-annotator/pkg/tenants"
)

// fakeTenants serves tenants' files from memory, as tenantwatch.Watch
// serves them from its caches.
type fakeTenants struct {
	mu       sync.Mutex
	files    map[string]string // namespace → file
	confirm  map[string]string // namespace → tenants.ConfirmAnnotation
	listable bool
	asked    int // calls of Files
	changed  chan struct{}
	reported [][]tenants.Result
}

func newFakeTenants() *fakeTenants {
	return &fakeTenants{files: map[string]string{}, confirm: map[string]string{}, listable: true, changed: make(chan struct{}, 1)}
}

func (f *fakeTenants) Files(_ context.Context, limits *spec.Tenants) ([]tenants.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	if !f.listable {
		return nil, errors.New("configmaps is forbidden")
	}
	var out []tenants.File
	for ns, data := range f.files {
		out = append(out, tenants.File{Namespace: ns, ConfigMap: limits.ConfigMap, UID: ns, Data: []byte(data), Confirm: f.confirm[ns]})
	}
	slices.SortFunc(out, func(a, b tenants.File) int { return strings.Compare(a.Namespace, b.Namespace) })
	return out, nil
}

func (f *fakeTenants) Changed() <-chan struct{} { return f.changed }
func (f *fakeTenants) Stop()                    {}

func (f *fakeTenants) Report(_ context.Context, results []tenants.Result) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reported = append(f.reported, results)
}

// put sets (or, for "", deletes) a tenant's file and says it changed.
func (f *fakeTenants) put(ns, data string) {
	f.mu.Lock()
	if data == "" {
		delete(f.files, ns)
	} else {
		f.files[ns] = data
	}
	f.mu.Unlock()
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// lastStatus returns the status last reported of ns's file, "" if none.
func (f *fakeTenants) lastStatus(ns string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reported) == 0 {
		return ""
	}
	for _, r := range f.reported[len(f.reported)-1] {
		if r.Namespace == ns {
			return r.Status()
		}
	}
	return ""
}

const tenantsFile = `tenants:
  resources: [configmaps]
  keys: {labels: ["team"]}
rules:
- name: admin
  resources: [configmaps]
  labels: {managed: "true"}
`

// ruleNames returns the names of the rules of set's configmaps.
func ruleNames(set *rules.Set) []string {
	for _, t := range set.Targets {
		return t.RuleNames()
	}
	return nil
}

// A tenant's file is merged after the main file's rules when it changes;
// a malformed edit keeps the rules last read, and its deletion drops them.
func TestTenantsRecomposed(t *testing.T) {
	ft := newFakeTenants()
	h := start(t, tenantsFile, Options{Tenants: ft})
	ft.put("team-a", "rules:\n- name: team\n  resources: [configmaps]\n  labels: {team: a, evil: x}\n- name: ok\n  resources: [configmaps]\n  labels: {team: b}\n  names: [b]\n")
	if got := ruleNames(h.waitApply()); !slices.Equal(got, []string{"admin", "team-a/ok"}) {
		t.Errorf("rules in force %v, want the admin's then the tenant's allowed", got)
	}
	h.waitFor("the refusal reported", func() bool { return strings.Contains(ft.lastStatus("team-a"), `label key "evil" matches none`) })

	ft.put("team-a", "rules: [")
	h.waitFor("the malformed file reported", func() bool { return strings.Contains(ft.lastStatus("team-a"), "rules last read stay in force") })
	if got := ruleNames(h.r.Set()); !slices.Equal(got, []string{"admin", "team-a/ok"}) {
		t.Errorf("rules in force after a malformed edit %v, want those last read", got)
	}

	ft.put("team-a", "")
	if got := ruleNames(h.waitApply()); !slices.Equal(got, []string{"admin"}) {
		t.Errorf("rules in force after the file's deletion %v, want the admin's alone", got)
	}
}

// Prepare merges the tenants' rules before the first apply, retrying
// while their files cannot be listed.
func TestTenantsPrepare(t *testing.T) {
	ft := newFakeTenants()
	ft.files["team-a"] = "rules:\n- name: team\n  resources: [configmaps]\n  labels: {team: a}\n"
	ft.listable = false
	h := newHarness(t, tenantsFile, Options{Tenants: ft, RetryInterval: 10 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- h.r.Prepare(context.Background()) }()
	h.waitFor("a retry", func() bool { ft.mu.Lock(); defer ft.mu.Unlock(); return ft.asked >= 2 })
	ft.mu.Lock()
	if len(ft.reported) > 0 {
		t.Errorf("reported %v before the files could be listed", ft.reported)
	}
	ft.listable = true
	ft.mu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := ruleNames(h.r.Set()); !slices.Equal(got, []string{"admin", "team-a/team"}) {
		t.Errorf("rules prepared %v, want the admin's then the tenant's", got)
	}
}
