package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// whenCondition is the when: condition the benchmark's Deployments are
// measured with: it holds for every seeded Deployment (their replicas are
// 0), and reading a field of the spec makes the Deployments' informer
// cache each object with the fields read instead of its metadata alone.
const whenCondition = "object.spec.replicas >= 0"

// rulesWhenYAML sets what rulesYAML sets, but on Deployments only when
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
`, annotationKey, annotationValue, whenCondition)

// whenPoint is kube-annotator's memory at the same objects with
// rulesYAML and with rulesWhenYAML.
type whenPoint struct {
	literal, when memoryPoint
	deployments   int
}

// measureWhen measures kube-annotator's memory, converged at the objects
// seeded so far, with rulesWhenYAML, beside literal, measured with
// rulesYAML.
func (b *bench) measureWhen(ctx context.Context, ka *runner, literal memoryPoint) (*whenPoint, error) {
	path := filepath.Join(filepath.Dir(b.rules), "when", "rules.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(rulesWhenYAML), 0o644); err != nil {
		return nil, err
	}
	r := *ka
	r.name = kaRunner + "-when"
	r.args = slices.Clone(ka.args)
	i := slices.Index(r.args, "--rules")
	if i < 0 || i+1 >= len(r.args) {
		return nil, fmt.Errorf("%s runs without --rules", ka.name)
	}
	r.args[i+1] = path
	logf("Measuring kube-annotator's memory at %d %s objects with when: %q on Deployments", b.objects, b.shape.name, whenCondition)
	p, err := b.memory(ctx, &r, memoryOptions{})
	if err != nil {
		return nil, fmt.Errorf("with when: on Deployments: %w", err)
	}
	return &whenPoint{literal: literal, when: p, deployments: b.objects / len(resources)}, nil
}

// print writes the heap with and without the when: condition, and the
// difference per Deployment.
func (p *whenPoint) print(w io.Writer, shape string) {
	fmt.Fprintf(w, "\n## A when: condition on Deployments: kube-annotator's memory, converged, %s objects\n\n", shape)
	fmt.Fprintf(w, "| rules | objects | of which Deployments | heap in use, GOGC=%d (MiB) | of which objects (MiB) | peak RSS (MiB) | RSS at rest (MiB) |\n", liveGOGC)
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, row := range []struct {
		name string
		p    memoryPoint
	}{{"literal", p.literal}, {fmt.Sprintf("when: %q on Deployments", whenCondition), p.when}} {
		fmt.Fprintf(w, "| %s | %d | %d | %.1f | %.1f | %s | %s |\n", row.name, row.p.objects, p.deployments,
			row.p.liveHeap/(1<<20), row.p.liveAlloc/(1<<20), mib(row.p.peakRSS), mib(row.p.restRSS))
	}
	n := float64(p.deployments)
	fmt.Fprintf(w, "\nThe when: condition reads a field of the spec, so the Deployments' informer caches each Deployment with the\n"+
		"fields read instead of its metadata alone: %.0f bytes of heap more per Deployment (%.0f of objects alone), the\n"+
		"difference of the two rows divided by the Deployments. Both processes ran with GOGC=%d.\n",
		(p.when.liveHeap-p.literal.liveHeap)/n, (p.when.liveAlloc-p.literal.liveAlloc)/n, liveGOGC)
}
