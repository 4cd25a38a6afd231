package e2e

import (
	"archive/tar"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	h "github.com/kube-annotator/kube-annotator/test/harness"
	"github.com/kube-annotator/kube-annotator/test/harness/proc"
)

// A release's install.yaml, from dist/ only (make release writes it; CI
// builds it before the tests), applies to a real API server; its
// Deployment runs the release's image by tag and by the digest of the
// image index in dist/kube-annotator-image.tar; and the release's own
// binary, from its plugin archive for this platform, run with the
// Deployment's arguments and rules as its ServiceAccount, converges. The
// control plane has no kubelet, so the image is not run here; make release
// runs it with `image verify`.
func TestReleaseInstallYAML(t *testing.T) {
	dist := h.ReleaseDist(t)
	manifest, err := os.ReadFile(filepath.Join(dist, "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	digest := imageIndexDigest(t, filepath.Join(dist, "kube-annotator-image.tar"))
	if recorded, err := os.ReadFile(filepath.Join(dist, "kube-annotator-image.digest")); err != nil || strings.TrimSpace(string(recorded)) != digest {
		t.Errorf("dist/kube-annotator-image.digest = %q (%v), want the image index's digest %s", recorded, err, digest)
	}
	images := regexp.MustCompile(`(?m)^\s+image: (\S+)$`).FindAllStringSubmatch(string(manifest), -1)
	if len(images) != 1 {
		t.Fatalf("install.yaml names %d images, want 1: %q", len(images), images)
	}
	ref := images[0][1]
	pinned := regexp.MustCompile(`^[^@]+/kube-annotator:(v\d+\.\d+\.\d+[^@]*)@` + regexp.QuoteMeta(digest) + `$`).FindStringSubmatch(ref)
	if pinned == nil {
		t.Fatalf("install.yaml's image is %q, want REGISTRY/kube-annotator:vX.Y.Z@%s", ref, digest)
	}

	if out, err := kubectl(t, string(manifest), "apply", "--server-side", "--force-conflicts", "-f", "-"); err != nil {
		t.Fatalf("apply dist/install.yaml: %v\n%s", err, out)
	}
	// deploy/'s image again, for the tests that apply deploy/ after this
	// one; applyDeploy's own cleanup then removes the opt-out lock.
	t.Cleanup(func() { applyDeploy(t) })

	dep := env.Get(t, h.Deployments, "kube-annotator", "kube-annotator")
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("Deployment kube-annotator has %d containers, want 1", len(containers))
	}
	if got, _, _ := unstructured.NestedString(containers[0].(map[string]any), "image"); got != ref {
		t.Errorf("the applied Deployment runs %q, want %q", got, ref)
	}
	cm := env.Get(t, h.ConfigMaps, "kube-annotator", "kube-annotator-rules")
	if data, _, _ := unstructured.NestedString(cm.Object, "data", "rules.yaml"); !strings.Contains(data, "frigates.ship.nwiizo.dev") {
		t.Errorf("ConfigMap kube-annotator-rules does not hold rules.yaml: %q", data)
	}
	for _, kind := range []string{"serviceaccount/kube-annotator", "service/kube-annotator-metrics", "role/kube-annotator", "rolebinding/kube-annotator"} {
		if out, err := kubectl(t, "", "get", "-n", "kube-annotator", kind, "-o", "name"); err != nil {
			t.Errorf("after applying install.yaml: %v\n%s", err, out)
		}
	}
	for _, kind := range []string{"clusterrole/kube-annotator", "clusterrolebinding/kube-annotator"} {
		if out, err := kubectl(t, "", "get", kind, "-o", "name"); err != nil {
			t.Errorf("after applying install.yaml: %v\n%s", err, out)
		}
	}
	runReleased(t, dist, pinned[1])
}

// imageIndexDigest reads the OCI layout tar file path and returns the
// digest of the one image index its index.json names.
func imageIndexDigest(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			t.Fatalf("%s has no index.json", path)
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name != "index.json" {
			continue
		}
		var index struct {
			Manifests []struct {
				MediaType string `json:"mediaType"`
				Digest    string `json:"digest"`
			} `json:"manifests"`
		}
		if err := json.NewDecoder(tr).Decode(&index); err != nil {
			t.Fatalf("%s: index.json: %v", path, err)
		}
		if len(index.Manifests) != 1 || index.Manifests[0].MediaType != "application/vnd.oci.image.index.v1+json" {
			t.Fatalf("%s: index.json names %+v, want one image index", path, index.Manifests)
		}
		return index.Manifests[0].Digest
	}
}

// runReleased runs the release's binary as install.yaml's Pod would: with
// its Deployment's arguments, the rules of its ConfigMap, as its
// ServiceAccount, its Lease and record in its namespace; only the
// addresses it serves on are changed, and it watches one new namespace,
// where it converges the seed objects.
func runReleased(t *testing.T, dist, version string) {
	t.Helper()
	bin := h.ReleasedBinary(t, dist, version)
	const podNS = "kube-annotator"
	var d appsv1.Deployment
	fromUnstructured(t, env.Get(t, h.Deployments, podNS, "kube-annotator").Object, &d)
	pod := d.Spec.Template.Spec
	var cm corev1.ConfigMap
	fromUnstructured(t, env.Get(t, h.ConfigMaps, podNS, pod.Volumes[0].ConfigMap.Name).Object, &cm)
	dir := t.TempDir()
	for key, data := range cm.Data {
		if err := os.WriteFile(filepath.Join(dir, key), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ns := env.NewNamespace(t)
	seed(t, ns)
	var args []string
	for _, a := range pod.Containers[0].Args[1:] { // after "run", which StartRun gives
		switch {
		case strings.HasPrefix(a, "--rules="):
			a = "--rules=" + filepath.Join(dir, filepath.Base(strings.TrimPrefix(a, "--rules=")))
		case strings.HasPrefix(a, "--metrics-bind-address="), strings.HasPrefix(a, "--health-probe-bind-address="):
			continue
		}
		args = append(args, a)
	}
	args = append(args, "--kubeconfig="+env.Kubeconfig, "--as=system:serviceaccount:"+podNS+":"+pod.ServiceAccountName,
		"--record-namespace="+podNS, "--leader-election-namespace="+podNS, "-n", ns)
	p := proc.StartRun(t, bin, args...)
	env.WaitForAnnotation(t, 30*time.Second, h.Deployments, ns, "web", sampleKey, sampleValue)
	env.WaitForAnnotation(t, 5*time.Second, h.ReplicaSets, ns, "web-rs", sampleKey, sampleValue)
	env.WaitForAnnotation(t, 5*time.Second, h.Frigates, ns, "frigate-sample", sampleKey, sampleValue)
	p.Terminate(t)
}

// fromUnstructured converts an object's content into a typed object.
func fromUnstructured(t *testing.T, obj map[string]any, out any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, out); err != nil {
		t.Fatal(err)
	}
}
