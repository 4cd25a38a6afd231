package staticdiscovery

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// find returns the resource named name in group-version gv of lists.
func find(lists []*metav1.APIResourceList, gv, name string) (metav1.APIResource, bool) {
	for _, l := range lists {
		if l.GroupVersion != gv {
			continue
		}
		for _, r := range l.APIResources {
			if r.Name == name {
				return r, true
			}
		}
	}
	return metav1.APIResource{}, false
}

func TestBuiltIn(t *testing.T) {
	lists, err := BuiltIn()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		gv, name, kind string
		namespaced     bool
		verbs          string // joined with spaces; "" for the full set
		shortNames     []string
	}{
		{gv: "v1", name: "pods", kind: "Pod", namespaced: true, shortNames: []string{"po"}},
		{gv: "v1", name: "nodes", kind: "Node", shortNames: []string{"no"}},
		{gv: "v1", name: "namespaces", kind: "Namespace", verbs: "create delete get list patch update watch", shortNames: []string{"ns"}},
		{gv: "v1", name: "endpoints", kind: "Endpoints", namespaced: true, shortNames: []string{"ep"}},
		{gv: "apps/v1", name: "deployments", kind: "Deployment", namespaced: true, shortNames: []string{"deploy"}},
		{gv: "autoscaling/v2", name: "horizontalpodautoscalers", kind: "HorizontalPodAutoscaler", namespaced: true, shortNames: []string{"hpa"}},
		{gv: "autoscaling/v1", name: "horizontalpodautoscalers", kind: "HorizontalPodAutoscaler", namespaced: true, shortNames: []string{"hpa"}},
		{gv: "events.k8s.io/v1", name: "events", kind: "Event", namespaced: true, shortNames: []string{"ev"}},
		{gv: "authentication.k8s.io/v1", name: "tokenreviews", kind: "TokenReview", verbs: "create"},
		{gv: "authorization.k8s.io/v1", name: "localsubjectaccessreviews", kind: "LocalSubjectAccessReview", namespaced: true, verbs: "create"},
		{gv: "rbac.authorization.k8s.io/v1", name: "clusterroles", kind: "ClusterRole"},
		{gv: "apiextensions.k8s.io/v1", name: "customresourcedefinitions", kind: "CustomResourceDefinition", shortNames: []string{"crd", "crds"}},
		{gv: "apiregistration.k8s.io/v1", name: "apiservices", kind: "APIService"},
		{gv: "coordination.k8s.io/v1beta1", name: "leasecandidates", kind: "LeaseCandidate", namespaced: true},
	}
	for _, tc := range tests {
		t.Run(tc.gv+"/"+tc.name, func(t *testing.T) {
			r, ok := find(lists, tc.gv, tc.name)
			if !ok {
				t.Fatalf("%s %s is not built in", tc.gv, tc.name)
			}
			verbs := tc.verbs
			if verbs == "" {
				verbs = "create delete deletecollection get list patch update watch"
			}
			want := metav1.APIResource{Name: tc.name, SingularName: strings.ToLower(tc.kind), Kind: tc.kind, Namespaced: tc.namespaced,
				Verbs: strings.Split(verbs, " "), ShortNames: tc.shortNames}
			if r.Name != want.Name || r.SingularName != want.SingularName || r.Kind != want.Kind || r.Namespaced != want.Namespaced ||
				!slices.Equal(r.Verbs, want.Verbs) || !slices.Equal(r.ShortNames, want.ShortNames) {
				t.Errorf("got  %+v\nwant %+v", r, want)
			}
		})
	}
}

// Versions the library's types say Kubernetes no longer serves are left
// out, and so are the clients of subresources alone.
func TestBuiltInLeavesOut(t *testing.T) {
	lists, err := BuiltIn()
	if err != nil {
		t.Fatal(err)
	}
	for _, gone := range []struct{ gv, name string }{
		{"extensions/v1beta1", "ingresses"},        // removed in 1.22
		{"apps/v1beta1", "deployments"},            // removed in 1.16
		{"policy/v1beta1", "poddisruptionbudgets"}, // removed in 1.25
		{"flowcontrol.apiserver.k8s.io/v1beta2", "flowschemas"},
		{"policy/v1", "evictions"}, // pods/eviction
	} {
		if _, ok := find(lists, gone.gv, gone.name); ok {
			t.Errorf("%s %s is built in, want it left out", gone.gv, gone.name)
		}
	}
	seen := map[string]bool{}
	for _, l := range lists {
		if seen[l.GroupVersion] {
			t.Errorf("%s is listed twice", l.GroupVersion)
		}
		seen[l.GroupVersion] = true
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || r.Name == "" || r.Kind == "" {
				t.Errorf("%s: resource %+v", l.GroupVersion, r)
			}
		}
	}
	if len(seen) < 30 {
		t.Errorf("%d group-versions built in, want the library's dozens", len(seen))
	}
}

// Every entry of the short-name table names a built-in resource: a
// resource the library drops does not leave a stale entry behind.
func TestShortNamesNameBuiltIns(t *testing.T) {
	lists, err := BuiltIn()
	if err != nil {
		t.Fatal(err)
	}
	builtIn := map[schema.GroupResource]bool{}
	for _, l := range lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		for _, r := range l.APIResources {
			builtIn[gv.WithResource(r.Name).GroupResource()] = true
		}
	}
	for gr := range shortNames {
		if !builtIn[gr] {
			t.Errorf("short names for %s, which is not built in", gr)
		}
	}
}

func TestParsePath(t *testing.T) {
	tests := []struct {
		path, verb string
		namespaced bool
		wantGV     string
		want       string
		wantErr    string
	}{
		{path: "/api/v1/namespaces/probe-namespace/pods/probe-name", verb: "get", namespaced: true, wantGV: "v1", want: "pods"},
		{path: "/api/v1/namespaces/probe-name", verb: "get", wantGV: "v1", want: "namespaces"},
		{path: "/apis/apps/v1/namespaces/probe-namespace/deployments/probe-name", verb: "get", namespaced: true, wantGV: "apps/v1", want: "deployments"},
		{path: "/apis/authentication.k8s.io/v1/tokenreviews", verb: "create", wantGV: "authentication.k8s.io/v1", want: "tokenreviews"},
		{path: "/apis/apps/v1/deployments/probe-name", verb: "get", namespaced: true, wantErr: "sent no namespace"},
		{path: "/apis/apps/v1/namespaces/probe-namespace/deployments/probe-name/status", verb: "get", namespaced: true, wantErr: "not one resource's path"},
		{path: "/apis/apps/v1/deployments/other", verb: "get", wantErr: "not one resource's path"},
		{path: "/healthz", verb: "get", wantErr: "not an API path"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			gv, res, err := parsePath(tc.path, tc.verb, tc.namespaced)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parsePath() = %v, %q, %v; want error %q", gv, res, err, tc.wantErr)
				}
				return
			}
			if err != nil || gv.String() != tc.wantGV || res != tc.want {
				t.Errorf("parsePath() = %v, %q, %v; want %s, %q", gv, res, err, tc.wantGV, tc.want)
			}
		})
	}
}
