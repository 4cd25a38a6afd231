package chart

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"

	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// The release's packaged chart, from dist/ only (make release writes it;
// CI builds it before the tests), installs with its own values on a real
// API server; its Deployment runs the release's image by the digest in
// dist/kube-annotator-image.digest, the image install.yaml runs; the
// release's binary, from its plugin archive for this platform, run as the
// chart's Pods would, converges; uninstalling leaves only the record and
// the leader Lease.
func TestReleaseChart(t *testing.T) {
	dist := h.ReleaseDist(t)
	archives, err := filepath.Glob(filepath.Join(dist, "kube-annotator-*.tgz"))
	if err != nil || len(archives) != 1 {
		t.Fatalf("dist/ holds the charts %q (%v), want one", archives, err)
	}
	ch, err := loader.LoadFile(archives[0])
	if err != nil {
		t.Fatal(err)
	}
	digest, err := os.ReadFile(filepath.Join(dist, "kube-annotator-image.digest"))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(dist, "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	images := regexp.MustCompile(`(?m)^\s+image: (\S+)$`).FindAllStringSubmatch(string(manifest), -1)
	if len(images) != 1 || !strings.HasSuffix(images[0][1], ":"+ch.Metadata.AppVersion+"@"+strings.TrimSpace(string(digest))) {
		t.Fatalf("install.yaml runs %q, want one image, tag %s by digest %s", images, ch.Metadata.AppVersion, digest)
	}

	objNS, ns := env.NewNamespace(t), env.NewNamespace(t)
	env.Create(t, h.Deployments, objNS, h.Deployment(t, objNS, "web", 1))
	before := snapshot(t)
	cfg := helmConfig(t, ns)
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = release, ns
	install.WaitStrategy, install.Timeout = kube.HookOnlyStrategy, time.Minute
	install.ServerSideApply = true
	if _, err := install.RunWithContext(t.Context(), ch, map[string]any{}); err != nil {
		t.Fatalf("helm install %s: %v", filepath.Base(archives[0]), err)
	}
	var d appsv1.Deployment
	fromUnstructured(t, env.Get(t, h.Deployments, ns, "ka-kube-annotator").Object, &d)
	if got := d.Spec.Template.Spec.Containers[0].Image; got != images[0][1] {
		t.Errorf("the chart's Deployment runs %q, want install.yaml's %q", got, images[0][1])
	}
	p := runController(t, ns, h.ReleasedBinary(t, dist, ch.Metadata.AppVersion))
	env.WaitForAnnotation(t, 30*time.Second, h.Deployments, objNS, "web", "sample-controller", "True")
	p.Terminate(t)

	uninstall := action.NewUninstall(cfg)
	uninstall.WaitStrategy, uninstall.Timeout = kube.HookOnlyStrategy, time.Minute
	uninstall.DeletionPropagation = "background"
	if _, err := uninstall.Run(release); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	left := snapshot(t).minus(before)
	want := []string{"/v1/configmaps " + ns + "/kube-annotator-resources", "coordination.k8s.io/v1/leases " + ns + "/ka-kube-annotator"}
	if !slices.Equal(left, want) {
		t.Errorf("after helm uninstall, new objects:\n%s\nwant only the record and the leader Lease:\n%s", strings.Join(left, "\n"), strings.Join(want, "\n"))
	}
}
