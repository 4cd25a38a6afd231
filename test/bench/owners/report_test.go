package owners

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kube-annotator/kube-annotator/test/bench/rig"
)

func TestHolds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		relabel Run
		written []string
		want    bool
	}{
		{name: "one PATCH per Pod", relabel: Run{Patches: 5000, Writes: 5000}, want: true},
		{name: "one PATCH too many", relabel: Run{Patches: 5001, Writes: 5001}},
		{name: "one Pod missed", relabel: Run{Patches: 4999, Writes: 4999}},
		{name: "another write on pods", relabel: Run{Patches: 5000, Writes: 5001}},
		{name: "a control Pod written", relabel: Run{Patches: 5000, Writes: 5000}, written: []string{"bench-owners-control/web-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{Pods: 5000, Relabel: []Run{{Patches: 5000, Writes: 5000}, tc.relabel}, ControlWritten: tc.written}
			if got := r.Holds(); got != tc.want {
				t.Errorf("Holds() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPerOwner(t *testing.T) {
	point := func(owners int, inuse float64) MemoryPoint {
		return MemoryPoint{ReadsOwners: true, Owners: owners, HeapInuse: inuse, HeapAlloc: inuse / 2}
	}
	literal := MemoryPoint{Owners: 4008, HeapInuse: 1, HeapAlloc: 1}
	for _, tc := range []struct {
		name   string
		points []MemoryPoint
		want   float64
		wantOK bool
	}{
		{name: "none"},
		{name: "one point", points: []MemoryPoint{point(8, 1e6)}},
		{name: "no owner added", points: []MemoryPoint{point(8, 1e6), point(8, 2e6), point(8, 1.5e6)}},
		{name: "4000 owners added", points: []MemoryPoint{point(8, 10e6), point(4008, 18e6), literal}, want: 2000, wantOK: true},
		{name: "no owner read", points: []MemoryPoint{point(8, 10e6), literal}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{Memory: tc.points}
			heap, alloc, ok := r.PerOwner()
			if ok != tc.wantOK || heap != tc.want || alloc != tc.want/2 {
				t.Errorf("PerOwner() = %v, %v, %v; want %v, %v, %v", heap, alloc, ok, tc.want, tc.want/2, tc.wantOK)
			}
		})
	}
}

func TestOwnerInformers(t *testing.T) {
	r := &Result{Memory: []MemoryPoint{{ReadsOwners: true, Owners: 8, HeapInuse: 12e6}, {ReadsOwners: true, Owners: 4008, HeapInuse: 20e6}, {HeapInuse: 9e6}}}
	if d, owners, ok := r.OwnerInformers(); !ok || d != 3e6 || owners != 8 {
		t.Errorf("OwnerInformers() = %v, %v, %v; want 3e6, 8, true", d, owners, ok)
	}
	r.Memory = r.Memory[:2]
	if _, _, ok := r.OwnerInformers(); ok {
		t.Error("OwnerInformers() ok with no point that reads no owner")
	}
}

func TestHoldsNothingMeasured(t *testing.T) {
	if (&Result{Pods: 5000}).Holds() {
		t.Error("Holds() with no relabel measured")
	}
}

func TestMedian(t *testing.T) {
	runs := []Run{
		{Name: "kube-annotator", Round: 1, Took: 30 * time.Second, Patches: 5000, CPU: 3},
		{Name: "kube-annotator", Round: 2, Took: 10 * time.Second, Patches: 5000, CPU: 5},
		{Name: "kube-annotator", Round: 3, Took: 20 * time.Second, Patches: 5001, CPU: 1},
	}
	got, ok := median(runs)
	if !ok || got.Took != 20*time.Second || got.Patches != 5000 || got.CPU != 3 || got.Name != "kube-annotator" {
		t.Errorf("median = %+v, %v; want took 20s, 5000 PATCH, 3 CPU s", got, ok)
	}
	if _, ok := median(nil); ok {
		t.Error("median of no run is ok")
	}
}

func TestRate(t *testing.T) {
	if got := (Run{Took: 2 * time.Second}).Rate(5000); got != 2500 {
		t.Errorf("Rate = %v, want 2500", got)
	}
	if got := (Run{}).Rate(5000); got != 0 {
		t.Errorf("Rate of a run not measured = %v, want 0", got)
	}
}

func TestPrint(t *testing.T) {
	r := &Result{
		Pods:    5000,
		Relabel: []Run{{Name: "kube-annotator", Round: 1, Took: 5 * time.Second, Patches: 5000, Writes: 5000, CPU: 2}},
		Raw:     []Run{{Name: "raw PATCH loop", Round: 1, Took: 10 * time.Second, Patches: 5000, Writes: 5000, CPU: 4}},
		Control: 32,
	}
	var out bytes.Buffer
	r.Print(&out, rig.Options{Workers: 8, MemoryWindow: 10 * time.Second})
	for _, want := range []string{
		"| kube-annotator | median | 5000 | 5.00 | 1000 | 2.00 | 5000 | 5000 | 2.00 | 0.50 | 0.00 | 0.00 | 0.00 |",
		"| raw PATCH loop | 1 | 5000 | 10.00 | 500 | 1.00 | 5000 | 5000 | 4.00 | 1.00 | 0.00 | 0.00 | 0.00 |",
		"no write elsewhere, in every round: yes (control Pods written: none, of 32)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("Print wrote:\n%s\nwant it to hold %q", out.String(), want)
		}
	}
	if strings.Contains(out.String(), "heap in use") {
		t.Errorf("Print wrote a memory table with no memory measured:\n%s", out.String())
	}

	failed := &Result{Pods: 5000}
	out.Reset()
	failed.Print(&out, rig.Options{})
	if strings.Contains(out.String(), "| kube-annotator |") {
		t.Errorf("Print wrote a run that was not measured:\n%s", out.String())
	}
}

func TestConvergedAndChanged(t *testing.T) {
	others := len(controlDeployments) * controlReplicas
	counts := podCounts{target: 3, targetTeams: map[string]int{"b": 3}, otherTeams: map[string]int{"a": others, defaultTeam: barePods}}
	if !converged(3, "b", "a")(counts) {
		t.Errorf("converged(3, b, a) is false on %+v", counts)
	}
	if converged(3, "a", "a")(counts) || converged(4, "b", "a")(counts) {
		t.Errorf("converged holds for another team or Pod count on %+v", counts)
	}
	counts.otherTeams["a"]--
	counts.otherTeams["b"]++
	if converged(3, "b", "a")(counts) {
		t.Errorf("converged holds with a control Pod relabelled: %+v", counts)
	}

	got := changed(map[string]string{"ns/a": "1", "ns/b": "2", "ns/c": "3"}, map[string]string{"ns/a": "1", "ns/b": "5"})
	if want := []string{"ns/b", "ns/c"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("changed = %q, want %q", got, want)
	}
}
