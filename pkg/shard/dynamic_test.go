package shard

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kube-annotator/kube-annotator/test/testutil"
)

// member is a Dynamic under test whose reshards can be held back, as
// informers that take long to sync.
type member struct {
	*Dynamic
	mu      sync.Mutex
	hold    chan struct{} // reshard waits on it while it is not nil
	serving Ranges
	// unsynced holds back the first sync of the informers.
	unsynced atomic.Bool
}

func newMember(t *testing.T, ctx context.Context, client *fake.Clientset, id string, unsynced bool) *member {
	t.Helper()
	sh := New(klog.Background(), nil, nil, 0, NewMetrics(prometheus.NewRegistry()))
	g := NewGroup(client, GroupConfig{Namespace: "ns", Name: "g", ID: id, LeaseName: "g-" + id, LeaseDuration: 2 * time.Second, RenewPeriod: 20 * time.Millisecond})
	m := &member{Dynamic: NewDynamic(sh, g, 20*time.Millisecond)}
	m.unsynced.Store(unsynced)
	if err := m.Join(ctx); err != nil {
		t.Fatal(err)
	}
	m.serving = sh.Ranges()
	go func() {
		_ = m.Run(ctx, func() bool { return !m.unsynced.Load() }, func(ctx context.Context) error {
			m.mu.Lock()
			hold := m.hold
			m.mu.Unlock()
			if hold != nil {
				select {
				case <-hold:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			m.mu.Lock()
			m.serving = sh.Ranges()
			m.mu.Unlock()
			return nil
		})
	}()
	return m
}

// served is the part of the hash space m's informers serve.
func (m *member) served() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.serving.Fraction()
}

func (m *member) holdReshards() {
	m.mu.Lock()
	m.hold = make(chan struct{})
	m.mu.Unlock()
}

func (m *member) releaseReshards() {
	m.mu.Lock()
	close(m.hold)
	m.hold = nil
	m.mu.Unlock()
}

// A member hands ranges over only once their new owner announced them
// synced; a member that leaves hands its ranges over at once.
// renewals counts the updates of the Lease named lease that client served.
func renewals(client *fake.Clientset, lease string) int {
	n := 0
	for _, a := range client.Actions() {
		u, ok := a.(k8stesting.UpdateAction)
		if !ok || u.GetResource().Resource != "leases" {
			continue
		}
		if l, ok := u.GetObject().(*coordinationv1.Lease); ok && l.Name == lease {
			n++
		}
	}
	return n
}

func TestDynamicHandoff(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	client := fake.NewClientset()
	a := newMember(t, ctx, client, "a", false)
	testutil.WaitFor(t, 5*time.Second, "a to own and serve everything", func() bool { return a.served() == 1 && a.Ready() == nil })

	bctx, stopB := context.WithCancel(ctx)
	b := newMember(t, bctx, client, "b", true)
	want := Assign([]string{"a", "b"}).Of("b").Ranges().Fraction()
	if got := b.served(); got != want {
		t.Fatalf("b starts on %.3f of the space, want its share %.3f", got, want)
	}
	// Ten renewals of a's Lease, each a chance for a to reshard.
	renewed := renewals(client, "g-a")
	testutil.WaitFor(t, 5*time.Second, "ten renewals of a's Lease", func() bool { return renewals(client, "g-a") >= renewed+10 })
	if got := a.shard.Ranges().Fraction(); got != 1 || b.Ready() == nil {
		t.Fatalf("a moved to %.3f of the space while b had not synced (b ready: %v), want all", got, b.Ready())
	}
	a.holdReshards()
	b.unsynced.Store(false)
	testutil.WaitFor(t, 5*time.Second, "b to announce its share", func() bool { return b.Ready() == nil })
	testutil.WaitFor(t, 5*time.Second, "a to start narrowing", func() bool {
		return a.shard.Ranges().Fraction() < 1
	})
	if got := a.served(); got != 1 {
		t.Errorf("a serves %.3f before its narrower informers synced, want all", got)
	}
	a.releaseReshards()
	testutil.WaitFor(t, 5*time.Second, "a to serve its share", func() bool { return a.served() == 1-want })

	a.holdReshards()
	stopB() // b deletes its Lease
	testutil.WaitFor(t, 5*time.Second, "a to widen again", func() bool { return a.shard.Ranges().Fraction() == 1 })
	if a.Ready() == nil {
		t.Errorf("a is ready before the ranges it took over synced")
	}
	a.releaseReshards()
	testutil.WaitFor(t, 5*time.Second, "a to serve everything and be ready", func() bool { return a.served() == 1 && a.Ready() == nil })
}

// A Lease expired for ten lease durations is deleted; one expired for
// less is kept, though no member counts it.
func TestGroupCollectsDeadLeases(t *testing.T) {
	client := fake.NewClientset()
	for name, age := range map[string]time.Duration{"dead": 25 * time.Second, "expired": 5 * time.Second} {
		_, err := client.CoordinationV1().Leases("ns").Create(t.Context(), &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{GroupLabel: "g"}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To(int32(2)),
				RenewTime: ptr.To(metav1.NewMicroTime(time.Now().Add(-age)))},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	m := newMember(t, ctx, client, "a", false)
	if peers, _ := m.group.Peers(time.Now()); len(peers) != 1 {
		t.Errorf("%d live members, want 1 (a): expired Leases count", len(peers))
	}
	testutil.WaitFor(t, 5*time.Second, "the dead member's Lease to be deleted", func() bool {
		_, err := client.CoordinationV1().Leases("ns").Get(t.Context(), "dead", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if _, err := client.CoordinationV1().Leases("ns").Get(t.Context(), "expired", metav1.GetOptions{}); err != nil {
		t.Errorf("the recently expired Lease: %v, want it kept", err)
	}
}
