package resolve

import (
	"cmp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
)

// groupOrdered is a discovery client whose ServerGroupsAndResources lists
// the resources group-version by group-version in the order the server
// ranks its groups and their versions. From aggregated discovery,
// client-go lists them in a map's order, and kubectl's short-name
// expansion takes the first resource that has the short name: "ev", the
// short name of both the core group's events and events.k8s.io's, would
// resolve to either, from one run to the next. In the server's order, it
// is the core group's, as kubectl has it.
//
// It embeds the DiscoveryInterface alone, without the methods that take a
// context, so that the short-name expander, which prefers those, calls
// this ServerGroupsAndResources.
type groupOrdered struct{ discovery.DiscoveryInterface }

// ServerGroupsAndResources returns the groups and the resources of every
// group-version, in the groups' order.
func (d groupOrdered) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	groups, lists, err := d.DiscoveryInterface.ServerGroupsAndResources()
	rank := map[string]int{}
	for _, g := range groups {
		for _, v := range g.Versions {
			rank[v.GroupVersion] = len(rank)
		}
	}
	ranked := func(l *metav1.APIResourceList) int {
		if r, ok := rank[l.GroupVersion]; ok {
			return r
		}
		return len(rank) // after the ranked ones
	}
	slices.SortStableFunc(lists, func(a, b *metav1.APIResourceList) int { return cmp.Compare(ranked(a), ranked(b)) })
	return groups, lists, err
}
