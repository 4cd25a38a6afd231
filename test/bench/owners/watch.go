package owners

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kube-annotator/kube-annotator/test/bench/progress"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// podWatch is the phase's own watch of the Pods: for each, whether it is
// one of Target's and the team label it carries, and when a team label
// last changed. After its initial list it only watches.
type podWatch struct {
	mu   sync.Mutex
	pods map[string]podState // by namespace/name
	// changed is when a Pod's team label last changed.
	changed time.Time
}

type podState struct {
	target, annotated bool
	team              string
}

// podCounts are the Pods a podWatch knows: all of them, and of Target's
// and the others, how many carry each team.
type podCounts struct {
	all, target, others int
	// annotated carry noOwnerRules' annotation.
	annotated   int
	targetTeams map[string]int
	otherTeams  map[string]int
}

// watchPods starts a podWatch of every namespace under ctx and waits for
// its initial list.
func watchPods(ctx context.Context, client metadata.Interface) (*podWatch, error) {
	w := &podWatch{pods: map[string]podState{}}
	factory := metadatainformer.NewSharedInformerFactory(client, 0)
	inf := factory.ForResource(h.Pods).Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observe(obj, false) },
		UpdateFunc: func(_, obj any) { w.observe(obj, false) },
		DeleteFunc: func(obj any) { w.observe(obj, true) },
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	factory.Start(ctx.Done())
	syncCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("watch pods: not synced within a minute")
	}
	return w, nil
}

func (w *podWatch) observe(obj any, deleted bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return
	}
	key := m.Namespace + "/" + m.Name
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	was, known := w.pods[key]
	if deleted {
		delete(w.pods, key)
		return
	}
	_, annotated := m.Annotations[noOwnerManager]
	is := podState{target: m.Namespace == Namespace && m.Labels["app"] == Target, team: m.Labels["team"], annotated: annotated}
	w.pods[key] = is
	if known && was.team != is.team {
		w.changed = now
	}
}

// counts returns what the watch knows now, and when a team label last
// changed.
func (w *podWatch) counts() (podCounts, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := podCounts{all: len(w.pods), targetTeams: map[string]int{}, otherTeams: map[string]int{}}
	for _, p := range w.pods {
		if p.annotated {
			c.annotated++
		}
		if p.target {
			c.target++
			c.targetTeams[p.team]++
		} else {
			c.others++
			c.otherTeams[p.team]++
		}
	}
	return c, w.changed
}

// converged returns the condition that Target's pods Pods carry
// targetTeam and every other Pod othersTeam, but bare Pods, which have
// no owner to read, the rule's default.
func converged(pods int, targetTeam, othersTeam string) func(podCounts) bool {
	others := len(controlDeployments) * controlReplicas
	return func(c podCounts) bool {
		return c.target == pods && c.targetTeams[targetTeam] == pods &&
			c.otherTeams[othersTeam] == others && c.otherTeams[defaultTeam] == barePods
	}
}

// waitFor waits up to timeout until cond holds for the watch's counts,
// checking every 20ms; alive, when not nil, is checked as often and ends
// the wait with its error. Every 5 seconds it logs where it is. It
// returns when a team label last changed.
func (w *podWatch) waitFor(ctx context.Context, what string, timeout time.Duration, cond func(podCounts) bool, alive func() error) (time.Time, error) {
	start := time.Now()
	stop := progress.Every(5*time.Second, func() {
		c, _ := w.counts()
		progress.Logf("  %s: %d Pods; of the Deployment's %d: teams %v; of the others %d: teams %v; after %v", what, c.all, c.target, c.targetTeams, c.others, c.otherTeams, progress.Since(start))
	})
	defer stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		c, changed := w.counts()
		if cond(c) {
			return changed, nil
		}
		if alive != nil {
			if err := alive(); err != nil {
				return changed, fmt.Errorf("%s: %w", what, err)
			}
		}
		if time.Since(start) > timeout {
			return changed, fmt.Errorf("%s: timed out after %v: Deployment's Pods %d, teams %v; others %d, teams %v", what, timeout, c.target, c.targetTeams, c.others, c.otherTeams)
		}
		select {
		case <-ctx.Done():
			return changed, fmt.Errorf("%s: %w", what, context.Cause(ctx))
		case <-tick.C:
		}
	}
}
