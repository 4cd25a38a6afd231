package shard

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// A member's Lease is written in format 1; the Leases of other members
// are read when version-less (the previous release's) or of format 1, and
// one of a newer format counts as a member that announces nothing.
func TestLeaseFormat(t *testing.T) {
	var announced VSet
	announced.Add(3)
	announced.Add(700)
	lease := func(name, format string) *coordinationv1.Lease {
		l := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{GroupLabel: "g"},
				Annotations: map[string]string{SyncedAnnotation: announced.String()}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To(int32(60)),
				RenewTime: ptr.To(metav1.NewMicroTime(time.Now()))},
		}
		if format != "" {
			l.Annotations[FormatAnnotation] = format
		}
		return l
	}
	client := fake.NewClientset(lease("versionless", ""), lease("one", "1"), lease("newer", "2"))
	g := NewGroup(client, GroupConfig{Namespace: "ns", Name: "g", ID: "me", LeaseName: "g-me", LeaseDuration: time.Minute, RenewPeriod: time.Second})
	if err := g.Join(t.Context()); err != nil {
		t.Fatal(err)
	}
	peers, err := g.Peers(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]VSet{"me": {}, "versionless": announced, "one": announced, "newer": {}}
	if len(peers) != len(want) {
		t.Errorf("peers %v, want %d", peers, len(want))
	}
	for _, p := range peers {
		if w, ok := want[p.ID]; !ok || p.Synced != w {
			t.Errorf("peer %s announces %s, want %s", p.ID, p.Synced, w)
		}
	}

	g.Announce(announced)
	if err := g.renew(t.Context()); err != nil {
		t.Fatal(err)
	}
	mine, err := client.CoordinationV1().Leases("ns").Get(t.Context(), "g-me", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mine.Annotations[FormatAnnotation] != Format || mine.Annotations[SyncedAnnotation] != announced.String() {
		t.Errorf("own Lease annotations %v, want format %s and the announced ranges", mine.Annotations, Format)
	}
}
