package memory

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	"github.com/kube-annotator/kube-annotator/test/bench/rig"
	"github.com/kube-annotator/kube-annotator/test/bench/table"
	"github.com/kube-annotator/kube-annotator/test/bench/workload"
)

// whenCondition is the when: condition the benchmark's Deployments are
// measured with: it holds for every seeded Deployment (their replicas are
// 0), and reading a field of the spec makes the Deployments' informer
// cache each object with the fields read instead of its metadata alone.
const whenCondition = "object.spec.replicas >= 0"

// rulesWhenYAML sets what rig.RulesYAML sets, but on Deployments only when
// whenCondition holds.
var rulesWhenYAML = fmt.Sprintf(`version: v1
rules:
- name: bench
  resources: [replicasets, pods, frigates.ship.nwiizo.dev]
  annotations:
    %[1]s: %[2]q
- name: bench-deployments
  resources: [deployments]
  when: %[3]q
  annotations:
    %[1]s: %[2]q
`, workload.AnnotationKey, workload.AnnotationValue, whenCondition)

// WhenPoint is kube-annotator's memory at the same objects with
// rulesYAML and with rulesWhenYAML.
type WhenPoint struct {
	literal, when Point
	deployments   int
}

// MeasureWhen measures kube-annotator's memory, converged at the objects
// seeded so far, with rulesWhenYAML, beside literal, measured with
// rulesYAML.
func MeasureWhen(ctx context.Context, b *rig.Bench, ka *rig.Runner, literal Point) (*WhenPoint, error) {
	path := filepath.Join(filepath.Dir(b.Rules), "when", "rules.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(rulesWhenYAML), 0o644); err != nil {
		return nil, err
	}
	r := *ka
	r.Name = rig.KARunner + "-when"
	r.Args = slices.Clone(ka.Args)
	i := slices.Index(r.Args, "--rules")
	if i < 0 || i+1 >= len(r.Args) {
		return nil, fmt.Errorf("%s runs without --rules", ka.Name)
	}
	r.Args[i+1] = path
	progress.Logf("Measuring kube-annotator's memory at %d %s objects with when: %q on Deployments", b.Objects, b.Shape.Name, whenCondition)
	p, err := Measure(ctx, b, &r, Options{})
	if err != nil {
		return nil, fmt.Errorf("with when: on Deployments: %w", err)
	}
	return &WhenPoint{literal: literal, when: p, deployments: b.Objects / len(workload.Resources)}, nil
}

// Print writes the heap with and without the when: condition, and the
// difference per Deployment.
func (p *WhenPoint) Print(w io.Writer, shape string) {
	fmt.Fprintf(w, "\n## A when: condition on Deployments: kube-annotator's memory, converged, %s objects\n\n", shape)
	fmt.Fprintf(w, "| rules | objects | of which Deployments | heap in use, GOGC=%d (MiB) | of which objects (MiB) | peak RSS (MiB) | RSS at rest (MiB) |\n", rig.LiveGOGC)
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, row := range []struct {
		name string
		p    Point
	}{{"literal", p.literal}, {fmt.Sprintf("when: %q on Deployments", whenCondition), p.when}} {
		fmt.Fprintf(w, "| %s | %d | %d | %.1f | %.1f | %s | %s |\n", row.name, row.p.Objects, p.deployments,
			row.p.liveHeap/(1<<20), row.p.liveAlloc/(1<<20), table.MiB(row.p.peakRSS), table.MiB(row.p.restRSS))
	}
	n := float64(p.deployments)
	fmt.Fprintf(w, "\nThe when: condition reads a field of the spec, so the Deployments' informer caches each Deployment with the\n"+
		"fields read instead of its metadata alone: %.0f bytes of heap more per Deployment (%.0f of objects alone), the\n"+
		"difference of the two rows divided by the Deployments. Both processes ran with GOGC=%d.\n",
		(p.when.liveHeap-p.literal.liveHeap)/n, (p.when.liveAlloc-p.literal.liveAlloc)/n, rig.LiveGOGC)
}
