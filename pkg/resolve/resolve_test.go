package resolve

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// fakeDiscovery serves configmaps and deployments; while down is set,
// every discovery request fails with err.
func fakeDiscovery(down *error) *fakediscovery.FakeDiscovery {
	fake := &k8stesting.Fake{}
	fake.AddReactor("get", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		return *down != nil, nil, *down
	})
	fake.Resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", SingularName: "configmap", Kind: "ConfigMap", Namespaced: true, ShortNames: []string{"cm"}, Verbs: metav1.Verbs{"get", "list"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", SingularName: "deployment", Kind: "Deployment", Namespaced: true, ShortNames: []string{"deploy"}, Verbs: metav1.Verbs{"get", "list"}},
		}},
	}
	return &fakediscovery.FakeDiscovery{Fake: fake}
}

func TestResolve(t *testing.T) {
	refused := errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	tests := []struct {
		name       string
		down       error
		want       string // resource.version.group
		wantErr    string
		notServed  bool
		namespaced bool
	}{
		{name: "cm", want: "configmaps.v1", namespaced: true},
		{name: "deploy", want: "deployments.v1.apps", namespaced: true},
		{name: "deployments.v1.apps", want: "deployments.v1.apps", namespaced: true},
		{name: "deployments.apps", want: "deployments.v1.apps", namespaced: true},
		{name: "widgets.example.com", wantErr: `resource "widgets.example.com" not found on the server`, notServed: true},
		{name: "deployments.v9.apps", wantErr: `resource "deployments.v9.apps" not found on the server (did you mean "deployments.v1.apps"?)`, notServed: true},
		{name: "confgmaps", wantErr: `resource "confgmaps" not found on the server (did you mean "configmaps"?)`, notServed: true},
		{name: "widgets", wantErr: `resource "widgets" not found on the server (a typo, or a CRD that is not installed?)`, notServed: true},
		{name: "cm", down: refused, wantErr: `resolve resource "cm": ` + refused.Error()},
		{name: "deployments.v1.apps", down: refused, wantErr: `resolve resource "deployments.v1.apps": ` + refused.Error()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			down := tc.down
			got, err := New(fakeDiscovery(&down)).Resolve(tc.name)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Resolve(%q) = %v, %v; want error containing %q", tc.name, got, err, tc.wantErr)
				}
				if errors.Is(err, ErrNotServed) != tc.notServed {
					t.Errorf("errors.Is(%v, ErrNotServed) = %v, want %v", err, !tc.notServed, tc.notServed)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.name, err)
			}
			if s := source.GVRString(got.GVR); s != tc.want || got.Namespaced != tc.namespaced {
				t.Errorf("Resolve(%q) = %s namespaced=%v, want %s namespaced=%v", tc.name, s, got.Namespaced, tc.want, tc.namespaced)
			}
		})
	}
}

// A failed discovery is not cached: once the server answers, names resolve.
func TestResolveAfterOutage(t *testing.T) {
	down := error(errors.New("connection refused"))
	r := New(fakeDiscovery(&down))
	if _, err := r.Resolve("cm"); err == nil || errors.Is(err, ErrNotServed) {
		t.Fatalf("Resolve during the outage = %v, want an error other than ErrNotServed", err)
	}
	down = nil
	r.Reset()
	if got, err := r.Resolve("cm"); err != nil || got.GVR.Resource != "configmaps" {
		t.Fatalf("Resolve after the outage = %v, %v; want configmaps", got, err)
	}
}

// A recorded group-resource resolves in exactly its group, with no short
// names: the core group's configmaps are not example.com's.
func TestResolveGroupResource(t *testing.T) {
	refused := errors.New("connection refused")
	tests := []struct {
		gr        schema.GroupResource
		down      error
		want      string // resource.version.group
		notServed bool
	}{
		{gr: schema.GroupResource{Resource: "configmaps"}, want: "configmaps.v1"},
		{gr: schema.GroupResource{Group: "example.com", Resource: "configmaps"}, want: "configmaps.v2.example.com"},
		{gr: schema.GroupResource{Group: "apps", Resource: "deployments"}, want: "deployments.v1.apps"},
		{gr: schema.GroupResource{Resource: "deployments"}, notServed: true},
		{gr: schema.GroupResource{Resource: "cm"}, notServed: true},
		{gr: schema.GroupResource{Group: "example.com", Resource: "widgets"}, notServed: true},
		{gr: schema.GroupResource{Resource: "configmaps"}, down: refused},
	}
	for _, tc := range tests {
		t.Run(tc.gr.String(), func(t *testing.T) {
			down := tc.down
			d := fakeDiscovery(&down)
			d.Resources = append(d.Resources, &metav1.APIResourceList{GroupVersion: "example.com/v2", APIResources: []metav1.APIResource{
				{Name: "configmaps", SingularName: "configmap", Kind: "Map", Verbs: metav1.Verbs{"get", "list"}},
			}})
			got, err := New(d).ResolveGroupResource(tc.gr)
			switch {
			case tc.want != "":
				if err != nil || source.GVRString(got.GVR) != tc.want {
					t.Errorf("ResolveGroupResource(%v) = %v, %v; want %s", tc.gr, got, err, tc.want)
				}
			case err == nil || errors.Is(err, ErrNotServed) != tc.notServed:
				t.Errorf("ResolveGroupResource(%v) = %v, %v; want an error, ErrNotServed: %v", tc.gr, got, err, tc.notServed)
			}
		})
	}
}
