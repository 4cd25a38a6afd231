package resolve

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"

	"github.com/kube-annotator/kube-annotator/pkg/staticdiscovery"
)

// shuffled is a discovery client that lists the resources in reverse, as
// aggregated discovery may list them in any order.
type shuffled struct{ discovery.DiscoveryInterface }

func (d shuffled) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	groups, lists, err := d.DiscoveryInterface.ServerGroupsAndResources()
	lists = slices.Clone(lists)
	slices.Reverse(lists)
	return groups, lists, err
}

// groupOrdered lists the resources in the order of the groups and their
// versions, however the discovery client beneath lists them.
func TestGroupOrdered(t *testing.T) {
	list := func(gv string) *metav1.APIResourceList {
		return &metav1.APIResourceList{GroupVersion: gv, APIResources: []metav1.APIResource{{Name: "events", Kind: "Event", Verbs: metav1.Verbs{"get"}}}}
	}
	d, err := staticdiscovery.New(list("events.k8s.io/v1beta1"), list("v1"), list("events.k8s.io/v1"), list("example.com/v1"))
	if err != nil {
		t.Fatal(err)
	}
	_, lists, err := groupOrdered{shuffled{d}}.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lists {
		got = append(got, l.GroupVersion)
	}
	if want := []string{"v1", "events.k8s.io/v1", "events.k8s.io/v1beta1", "example.com/v1"}; !slices.Equal(got, want) {
		t.Errorf("ServerGroupsAndResources() lists %v, want %v", got, want)
	}
}
