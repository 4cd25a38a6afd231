package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// syncHandler makes the object named by key carry what the rules want. It
// reads the object from the informer's cache (never from the API server),
// and writes one merge patch carrying only the keys that must change —
// set, or deleted because this controller set them and no rule wants them
// any more — or nothing.
func (c *Controller) syncHandler(ctx context.Context, key Key) error {
	obj, target, err := c.cachedObject(key)
	if err != nil {
		return err
	}
	if obj == nil {
		c.expect.forget(key) // deleted, or no longer ruled: nothing to do
		return nil
	}
	rv := obj.GetResourceVersion()
	if c.expect.pending(key, rv) {
		return nil // our last write's echo has not reached the cache yet
	}
	ev := target.Evaluate(obj, c.namespaceLabels)
	c.report(ctx, key, obj, ev)
	change := patch.Plan(obj.GetAnnotations(), obj.GetLabels(),
		patch.OwnedBy(obj.GetManagedFields(), c.opts.FieldManager), ev.Desired)
	if change.Empty() {
		return nil
	}
	requests, err := patch.Requests(obj, change)
	if err != nil {
		return fmt.Errorf("encode patch for %s: %w", key, err)
	}

	// A write in flight is finished even when ctx is cancelled: abandoning
	// it would leave its outcome unknown.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.WriteTimeout)
	defer cancel()
	summary := describe(change)
	newRV := rv
	for _, r := range requests {
		opts := metav1.PatchOptions{FieldManager: c.opts.FieldManager}
		if r.Force {
			opts.Force = &r.Force
		}
		res, err := c.client.Resource(key.GVR).Namespace(key.Namespace).Patch(wctx, key.Name, r.Type, r.Body, opts)
		c.count(c.writes(), key, err)
		if apierrors.IsNotFound(err) {
			return nil // deleted meanwhile: nothing to do
		}
		if err != nil {
			if isPermanent(err) && c.opts.Recorder != nil {
				c.opts.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "AnnotateFailed", "Patch", "Could not change %s: %v", summary, err)
			}
			return fmt.Errorf("patch %s: %w", key, err)
		}
		newRV = res.GetResourceVersion()
	}
	c.expect.record(key, rv, newRV)
	if logger := klog.FromContext(ctx).V(2); logger.Enabled() {
		logger.Info("Patched metadata", "key", key.String(), "change", summary)
	}
	if c.opts.Recorder != nil {
		c.opts.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Annotated", "Patch", "Changed %s", summary)
	}
	return nil
}

// report logs values that could not be read from the object and rules that
// conflict on it, with a Warning event and a metric for conflicts.
func (c *Controller) report(ctx context.Context, key Key, obj cached, ev *rules.Evaluation) {
	logger := klog.FromContext(ctx)
	for _, p := range ev.Problems {
		logger.Info("Value not set", "key", key.String(), "reason", p)
	}
	for _, cf := range ev.Conflicts {
		logger.Info("Rules conflict; file order decides", "key", key.String(), cf.Kind, cf.Key, "kept", cf.Kept, "dropped", cf.Dropped)
		if c.opts.Metrics != nil {
			c.opts.Metrics.Conflicts.WithLabelValues(key.GVR.GroupResource().String()).Inc()
		}
		if c.opts.Recorder != nil {
			c.opts.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "RulesConflict", "Evaluate",
				"Rules %s and %s want different values for %s %s; %s wins (file order)", cf.Kept, cf.Dropped, cf.Kind, cf.Key, cf.Kept)
		}
	}
}

// describe lists a change's keys for logs and events:
// "annotations a, b; labels -c" (a leading "-" is a deletion).
func describe(ch patch.Change) string {
	var parts []string
	for _, kv := range []struct {
		kind string
		m    map[string]*string
	}{{"annotations", ch.Annotations}, {"labels", ch.Labels}} {
		if len(kv.m) == 0 {
			continue
		}
		keys := make([]string, 0, len(kv.m))
		for k, v := range kv.m {
			if v == nil {
				k = "-" + k
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts = append(parts, kv.kind+" "+strings.Join(keys, ", "))
	}
	return strings.Join(parts, "; ")
}
