package staticdiscovery

import (
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// list is a resource list of gv with resources named names.
func list(gv string, names ...string) *metav1.APIResourceList {
	l := &metav1.APIResourceList{GroupVersion: gv}
	for _, n := range names {
		l.APIResources = append(l.APIResources, metav1.APIResource{Name: n, Kind: "K", Verbs: metav1.Verbs{"get"}})
	}
	return l
}

func TestNew(t *testing.T) {
	d, err := New(list("example.com/v1alpha1", "widgets"), list("apps/v1", "deployments"), list("v1", "pods"),
		list("example.com/v1", "gadgets"), list("example.com/v1beta2", "widgets"), list("example.com/v1", "widgets"), list("example.com/v2", "widgets"))
	if err != nil {
		t.Fatal(err)
	}
	groups, err := d.ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range groups.Groups {
		var versions []string
		for _, v := range g.Versions {
			versions = append(versions, v.Version)
		}
		got = append(got, g.Name+"="+g.PreferredVersion.Version+":"+strings.Join(versions, ","))
	}
	// The core group first, the others as given; GA before beta before
	// alpha, newest first.
	want := []string{"=v1:v1", "example.com=v2:v2,v1,v1beta2,v1alpha1", "apps=v1:v1"}
	if !slices.Equal(got, want) {
		t.Errorf("groups = %v, want %v", got, want)
	}
	l, err := d.ServerResourcesForGroupVersion("example.com/v1")
	if err != nil || len(l.APIResources) != 2 || l.APIResources[0].Name != "gadgets" || l.APIResources[1].Name != "widgets" {
		t.Errorf("ServerResourcesForGroupVersion(example.com/v1) = %v, %v; want gadgets and widgets merged", l, err)
	}
	if _, err := d.ServerResourcesForGroupVersion("example.com/v3"); !apierrors.IsNotFound(err) {
		t.Errorf("ServerResourcesForGroupVersion(example.com/v3) error = %v, want NotFound", err)
	}
	preferred, err := d.ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range preferred {
		for _, r := range l.APIResources {
			names = append(names, r.Name+"."+l.GroupVersion)
		}
	}
	slices.Sort(names)
	if want := []string{"deployments.apps/v1", "gadgets.example.com/v1", "pods.v1", "widgets.example.com/v2"}; !slices.Equal(names, want) {
		t.Errorf("ServerPreferredResources() = %v, want %v", names, want)
	}
	if _, err := d.ServerVersion(); err != ErrNoServer {
		t.Errorf("ServerVersion() error = %v, want ErrNoServer", err)
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(list("apps/v1", "deployments"), list("apps/v1", "deployments")); err == nil || err.Error() != "resource deployments is listed twice in apps/v1" {
		t.Errorf("New() error = %v, want a resource listed twice", err)
	}
	if _, err := New(list("a/b/c", "x")); err == nil || !strings.Contains(err.Error(), `resource list "a/b/c"`) {
		t.Errorf("New() error = %v, want the bad group-version named", err)
	}
}
