package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

// syncHandler makes the object named by key carry what the rules want. It
// reads the object from the informer's cache (never from the API server),
// and writes one merge patch carrying only the keys that differ, or nothing.
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
	changed := patch.Annotations(annotationsOf(obj), target.Annotations)
	if len(changed) == 0 {
		return nil
	}
	data, err := patch.MergePatch(changed)
	if err != nil {
		return fmt.Errorf("encode patch for %s: %w", key, err)
	}

	// A write in flight is finished even when ctx is cancelled: abandoning
	// it would leave its outcome unknown.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.WriteTimeout)
	defer cancel()
	res, err := c.client.Resource(key.GVR).Namespace(key.Namespace).
		Patch(wctx, key.Name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: c.opts.FieldManager})
	if apierrors.IsNotFound(err) {
		return nil
	}
	c.count(c.writes(), key, err)
	if err != nil {
		if isPermanent(err) && c.opts.Recorder != nil {
			c.opts.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "AnnotateFailed", "Patch",
				"Could not set annotations %s: %v", strings.Join(sortedKeys(changed), ", "), err)
		}
		return fmt.Errorf("patch %s: %w", key, err)
	}
	c.expect.record(key, rv, res.GetResourceVersion())
	if logger := klog.FromContext(ctx).V(2); logger.Enabled() {
		logger.Info("Patched annotations", "key", key.String(), "keys", sortedKeys(changed))
	}
	if c.opts.Recorder != nil {
		c.opts.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Annotated", "Patch",
			"Set annotations %s", strings.Join(sortedKeys(changed), ", "))
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
