package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

const (
	ignoreKey    = "kube-annotator.io/ignore"
	lockRefusal  = "may set, change or remove the annotation kube-annotator.io/ignore"
	optOutMerged = `{"metadata":{"annotations":{"kube-annotator.io/ignore":"true"}}}`
)

// lockPath is one way a request can write an object's metadata: a
// resource, or one of its subresources, and the request that tries to set
// the opt-out annotation through it.
type lockPath struct {
	gvr         schema.GroupVersionResource
	subresource string
	namespace   string
	name        string
	// write sends the request as the client c.
	write func(ctx context.Context, c dynamic.Interface, p lockPath) error
	// noAdmin: the admin does not take this path (an eviction would
	// delete the Pod the other paths use).
	noAdmin bool
}

func (p lockPath) String() string {
	if p.subresource == "" {
		return p.gvr.Resource
	}
	return p.gvr.Resource + "/" + p.subresource
}

func (p lockPath) client(c dynamic.Interface) dynamic.ResourceInterface {
	if p.namespace == "" {
		return c.Resource(p.gvr)
	}
	return c.Resource(p.gvr).Namespace(p.namespace)
}

// mergePatch patches the path with the opt-out annotation.
func mergePatch(ctx context.Context, c dynamic.Interface, p lockPath) error {
	var sub []string
	if p.subresource != "" {
		sub = []string{p.subresource}
	}
	_, err := p.client(c).Patch(ctx, p.name, types.MergePatchType, []byte(optOutMerged), metav1.PatchOptions{}, sub...)
	return err
}

// createWith creates, at the path, an object of kind (a Binding, an
// Eviction) that carries the opt-out annotation.
func createWith(apiVersion, kind string, fields map[string]any) func(context.Context, dynamic.Interface, lockPath) error {
	return func(ctx context.Context, c dynamic.Interface, p lockPath) error {
		u := h.Object(apiVersion, kind, p.namespace, p.name)
		for k, v := range fields {
			u.Object[k] = v
		}
		u.SetAnnotations(map[string]string{ignoreKey: "true"})
		_, err := p.client(c).Create(ctx, u, metav1.CreateOptions{}, p.subresource)
		return err
	}
}

// updateWith reads the object, sets the opt-out annotation and sends the
// whole object to the path (namespaces/finalize takes only a PUT).
func updateWith(ctx context.Context, c dynamic.Interface, p lockPath) error {
	u, err := p.client(c).Get(ctx, p.name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[ignoreKey] = "true"
	u.SetAnnotations(a)
	_, err = p.client(c).Update(ctx, u, metav1.UpdateOptions{}, p.subresource)
	return err
}

// connectOnly are the subresources that discovery lists with the create
// verb but that admission sees as CONNECT, with no object to carry
// metadata: they cannot write an annotation.
var connectOnly = []string{"attach", "exec", "portforward", "proxy"}

// The opt-out lock has no side door: a user with every RBAC right but in
// no allowed group cannot set the opt-out annotation through the resource
// or through any of its writable subresources (pods/status, and
// pods/binding, which copies the Binding's annotations onto the Pod,
// among them), on the resources the default rules target and on
// Namespaces and Nodes. Every writable subresource that discovery lists
// for them must be in the table, so a subresource a new Kubernetes
// version adds fails the test until it is tried. An admin's write through
// the same path shows which paths really write the annotation.
func TestOptOutLockSubresources(t *testing.T) {
	ns := env.NewNamespace(t)
	user := "optout-paths-" + ns
	applyOptOutLock(t, ns, user)

	pods, node := h.Pods, "lock-"+ns
	for _, name := range []string{"door", "bind", "evict"} {
		env.Create(t, pods, ns, h.Pod(t, ns, name))
	}
	env.Create(t, h.Deployments, ns, h.Deployment(t, ns, "web", 1))
	env.Create(t, h.ReplicaSets, ns, h.ReplicaSet(t, ns, "web"))
	frigate := env.Create(t, h.Frigates, ns, h.FrigateSample(t, ns))
	env.Create(t, nodes, "", h.Object("v1", "Node", "", node))
	t.Cleanup(func() {
		if err := env.Dynamic.Resource(nodes).Delete(context.Background(), node, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete node %s: %v", node, err)
		}
	})

	binding := createWith("v1", "Binding", map[string]any{"target": map[string]any{"apiVersion": "v1", "kind": "Node", "name": node}})
	eviction := createWith("policy/v1", "Eviction", nil)
	paths := []lockPath{
		{gvr: pods, namespace: ns, name: "door", write: mergePatch},
		{gvr: pods, subresource: "status", namespace: ns, name: "door", write: mergePatch},
		{gvr: pods, subresource: "ephemeralcontainers", namespace: ns, name: "door", write: mergePatch},
		{gvr: pods, subresource: "resize", namespace: ns, name: "door", write: mergePatch},
		{gvr: pods, subresource: "binding", namespace: ns, name: "bind", write: binding},
		{gvr: pods, subresource: "eviction", namespace: ns, name: "evict", write: eviction, noAdmin: true},
		{gvr: h.Deployments, namespace: ns, name: "web", write: mergePatch},
		{gvr: h.Deployments, subresource: "status", namespace: ns, name: "web", write: mergePatch},
		{gvr: h.Deployments, subresource: "scale", namespace: ns, name: "web", write: mergePatch},
		{gvr: h.ReplicaSets, namespace: ns, name: "web", write: mergePatch},
		{gvr: h.ReplicaSets, subresource: "status", namespace: ns, name: "web", write: mergePatch},
		{gvr: h.ReplicaSets, subresource: "scale", namespace: ns, name: "web", write: mergePatch},
		{gvr: h.Frigates, namespace: ns, name: frigate.GetName(), write: mergePatch},
		{gvr: h.Frigates, subresource: "status", namespace: ns, name: frigate.GetName(), write: mergePatch},
		{gvr: h.Namespaces, name: ns, write: mergePatch},
		{gvr: h.Namespaces, subresource: "status", name: ns, write: mergePatch},
		{gvr: h.Namespaces, subresource: "finalize", name: ns, write: updateWith},
		{gvr: nodes, name: node, write: mergePatch},
		{gvr: nodes, subresource: "status", name: node, write: mergePatch},
	}
	checkPathsCoverDiscovery(t, paths)

	userClient := impersonating(t, rest.ImpersonationConfig{UserName: user})
	var doors []string
	for _, p := range paths {
		t.Run(strings.ReplaceAll(p.String(), "/", "_"), func(t *testing.T) {
			err := p.write(t.Context(), userClient, p)
			if err != nil && !strings.Contains(err.Error(), lockRefusal) {
				t.Logf("%s: refused, not by the lock: %v", p, err)
			}
			if carriesOptOut(t, p) {
				removeOptOut(t, p) // for the paths tried after this one
				t.Fatalf("%s set the opt-out annotation through %s (the request answered %v)", user, p, err)
			}
			if p.noAdmin {
				return
			}
			// The same write as an admin: where it sets the annotation,
			// the path is a door, and the user must have been refused by
			// the lock itself.
			adminErr := p.write(t.Context(), env.Dynamic, p)
			if !carriesOptOut(t, p) {
				t.Logf("%s does not write metadata (the admin's request answered %v)", p, adminErr)
				return
			}
			doors = append(doors, p.String())
			if err == nil || !strings.Contains(err.Error(), lockRefusal) {
				t.Errorf("%s through %s: got %v, want the lock's refusal", user, p, err)
			}
			removeOptOut(t, p)
		})
	}
	// The paths the lock missed before it matched subresources are doors
	// here, or the test proves nothing.
	for _, want := range []string{"pods", "pods/status", "pods/binding"} {
		if !slices.Contains(doors, want) {
			t.Errorf("an admin could not set the annotation through %s (doors: %v): the test no longer tries a real side door", want, doors)
		}
	}
	t.Logf("paths that write metadata: %v", doors)
}

// checkPathsCoverDiscovery fails the test for a writable subresource that
// the server lists for one of the paths' resources but the table lacks.
func checkPathsCoverDiscovery(t *testing.T, paths []lockPath) {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	resources := map[schema.GroupVersionResource]bool{}
	for _, p := range paths {
		have[p.String()] = true
		resources[p.gvr] = true
	}
	for gvr := range resources {
		list, err := dc.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		if err != nil {
			t.Fatalf("discover %s: %v", gvr.GroupVersion(), err)
		}
		for _, r := range list.APIResources {
			parent, sub, ok := strings.Cut(r.Name, "/")
			if !ok || parent != gvr.Resource || slices.Contains(connectOnly, sub) {
				continue
			}
			writes := slices.ContainsFunc(r.Verbs, func(v string) bool { return v == "create" || v == "update" || v == "patch" })
			if writes && !have[r.Name] {
				t.Errorf("the server lists the writable subresource %s (verbs %v), which the test does not try", r.Name, r.Verbs)
			}
		}
	}
}

// applyOptOutLock applies deploy/optout-lock.yaml, removed at the test's
// end, grants user every RBAC right, and waits until the lock refuses
// user the opt-out annotation on a ConfigMap of ns.
func applyOptOutLock(t *testing.T, ns, user string) {
	t.Helper()
	policy := h.RepoRoot() + "/deploy/optout-lock.yaml"
	if out, err := kubectl(t, "", "apply", "--server-side", "-f", policy); err != nil {
		t.Fatalf("apply %s: %v\n%s", policy, err, out)
	}
	t.Cleanup(func() {
		if out, err := kubectl(t, "", "delete", "--ignore-not-found", "-f", policy); err != nil {
			t.Errorf("delete %s: %v\n%s", policy, err, out)
		}
	})
	env.GrantClusterAdmin(t, user)
	probe := lockPath{gvr: h.ConfigMaps, namespace: ns, name: "lock-probe", write: mergePatch}
	env.Create(t, h.ConfigMaps, ns, h.Object("v1", "ConfigMap", ns, probe.name))
	c := impersonating(t, rest.ImpersonationConfig{UserName: user})
	// The policy takes a moment to be in force: until then the user's
	// write goes through, and an admin takes the annotation off again.
	waitFor(t, 30*time.Second, "the opt-out lock in force", func() bool {
		err := probe.write(t.Context(), c, probe)
		if err != nil {
			return strings.Contains(err.Error(), lockRefusal)
		}
		removeOptOut(t, probe)
		return false
	})
}

// impersonating returns a dynamic client of the admin's that acts as as.
func impersonating(t *testing.T, as rest.ImpersonationConfig) dynamic.Interface {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = as
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// carriesOptOut reports whether the object at p carries the opt-out
// annotation.
func carriesOptOut(t *testing.T, p lockPath) bool {
	t.Helper()
	u, err := lockPath{gvr: p.gvr, namespace: p.namespace}.client(env.Dynamic).Get(t.Context(), p.name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s %s: %v", p.gvr.Resource, p.name, err)
	}
	return hasKey(u.GetAnnotations(), ignoreKey)
}

// removeOptOut takes the opt-out annotation off the object at p, as an
// admin.
func removeOptOut(t *testing.T, p lockPath) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, ignoreKey)
	if _, err := (lockPath{gvr: p.gvr, namespace: p.namespace}).client(env.Dynamic).Patch(t.Context(), p.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("remove the opt-out annotation from %s %s: %v", p.gvr.Resource, p.name, err)
	}
}
