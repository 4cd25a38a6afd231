package e2e

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/staticdiscovery"
	h "github.com/kube-annotator/kube-annotator/test/harness"
)

// TestOffline proves that what is known offline is what a server of the
// client library's version serves: every built-in resource it serves
// that can be listed and watched, as discovery lists it, and each of its
// names resolving to the same resource offline as online; and that rbac
// and admission print offline, for the repository's rules.yaml with the
// Frigate CRD given as a file, what they print against the server; and
// that check --offline type-checks CEL against the schemas the server
// publishes, refusing what check on the cluster refuses, in its words.
func TestOffline(t *testing.T) {
	if !strings.HasPrefix(env.Features.Version, "v"+staticdiscovery.KubeVersion()+".") {
		t.Skipf("the server is %s; the offline view is of Kubernetes %s", env.Features.Version, staticdiscovery.KubeVersion())
	}
	t.Run("discovery", testOfflineDiscovery)
	t.Run("commands", testOfflineCommands)
	t.Run("schemas", testOfflineSchemas)
	t.Run("type-check", testOfflineTypeCheck)
}

func testOfflineCommands(t *testing.T) {
	for _, args := range [][]string{
		{"rbac", "--rules", rulesPath()},
		{"rbac", "--rules", rulesPath(), "-n", "annotator", "--events", "--admission-policies"},
		{"admission", "--rules", rulesPath()},
		{"admission", "--rules", rulesPath(), "-n", "team-a", "--exclude-namespaces=kube-*"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			online, stderr, code := runCLI(t, append(args, "--kubeconfig", env.Kubeconfig)...)
			if code != 0 || online == "" {
				t.Fatalf("online: exit %d, stdout %q\n%s", code, online, stderr)
			}
			offline, stderr, code := runCLI(t, append(args, "--offline", "--crd", h.CRDFile())...)
			if code != 0 {
				t.Fatalf("offline: exit %d\n%s", code, stderr)
			}
			if offline != online {
				t.Errorf("offline output differs from online\noffline:\n%s\nonline:\n%s", offline, online)
			}
			if strings.Contains(stderr, "warning: "+rulesPath()) {
				t.Errorf("offline warns of the rules:\n%s", stderr)
			}
		})
	}
	if stdout, stderr, code := runCLI(t, "check", "--offline", "--rules", rulesPath(), "--crd", h.CRDFile()); code != 0 || stderr != "" {
		t.Errorf("check --offline: exit %d\n%s%s", code, stdout, stderr)
	}
}

func testOfflineDiscovery(t *testing.T) {
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	_, served, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	builtIn, err := staticdiscovery.BuiltIn()
	if err != nil {
		t.Fatal(err)
	}
	offline := indexResources(builtIn)
	online := indexResources(served)
	var names []string // every name of every served built-in resource
	for gvr, s := range online {
		if gvr.Group == h.Frigates.Group || !slices.Contains(s.Verbs, "list") || !slices.Contains(s.Verbs, "watch") {
			continue // the CRD; and what no rule can name, such as bindings and tokenreviews
		}
		o, ok := offline[gvr]
		if !ok {
			t.Errorf("%s is served and not known offline", source.GVRString(gvr))
			continue
		}
		if o.Kind != s.Kind || o.Namespaced != s.Namespaced || o.SingularName != s.SingularName ||
			!slices.Equal(sorted(o.ShortNames), sorted(s.ShortNames)) || !slices.Equal(controllerVerbs(o.Verbs), controllerVerbs(s.Verbs)) {
			t.Errorf("%s:\noffline %+v\nserved  %+v", source.GVRString(gvr), o, s)
		}
		names = append(names, s.Name, s.SingularName, s.Name+"."+gvr.Version+"."+gvr.Group)
		if gvr.Group != "" {
			names = append(names, s.Name+"."+gvr.Group)
		}
		names = append(names, s.ShortNames...)
	}
	// What is known offline and not served is what a cluster may enable.
	for gvr := range offline {
		if _, ok := online[gvr]; !ok && !strings.Contains(gvr.Version, "alpha") && !strings.Contains(gvr.Version, "beta") {
			t.Errorf("%s is known offline and not served, and not an alpha or beta version", source.GVRString(gvr))
		}
	}
	if len(names) < 100 {
		t.Fatalf("%d names of served resources compared, want the server's hundreds", len(names))
	}

	// A short name two groups share ("ev": events and events.k8s.io's
	// events) resolves, online as offline, to the group the server ranks
	// first, though aggregated discovery lists resources in any order.
	on := resolve.New(dc)
	off, err := resolve.NewOffline("", h.CRDFile())
	if err != nil {
		t.Fatal(err)
	}
	names = append(names, "frigates", "frigate", "frigates.ship.nwiizo.dev", "frigates.v1beta1.ship.nwiizo.dev")
	for _, name := range names {
		want, err := on.Resolve(name)
		if err != nil {
			t.Errorf("online: %v", err)
			continue
		}
		if got, err := off.Resolve(name); err != nil || got != want {
			t.Errorf("Resolve(%q) offline = %+v, %v; online %+v", name, got, err, want)
		}
	}
}

// indexResources indexes the resources of lists, less subresources, by
// group, version and resource.
func indexResources(lists []*metav1.APIResourceList) map[schema.GroupVersionResource]metav1.APIResource {
	out := map[schema.GroupVersionResource]metav1.APIResource{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") {
				out[gv.WithResource(r.Name)] = r
			}
		}
	}
	return out
}

// controllerVerbs are those of verbs the controller needs.
func controllerVerbs(verbs []string) []string {
	var out []string
	for _, v := range []string{"get", "list", "watch", "patch"} {
		if slices.Contains(verbs, v) {
			out = append(out, v)
		}
	}
	return out
}

// sorted returns a sorted copy of s.
func sorted(s []string) []string {
	return slices.Sorted(slices.Values(s))
}
