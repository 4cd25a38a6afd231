package shard

import (
	"context"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

const (
	// GroupLabel labels the Leases of a group's members with the group.
	GroupLabel = "shard.kube-annotator.io/group"
	// SyncedAnnotation on a member's Lease lists the virtual ranges it
	// owns and has synced (VSet.String): their previous owners may let
	// them go.
	SyncedAnnotation = "shard.kube-annotator.io/synced"
)

// GroupConfig names a group of replicas and times its Leases.
type GroupConfig struct {
	// Namespace holds the Leases.
	Namespace string
	// Name is the group's name, GroupLabel's value and the prefix of its
	// Leases' names.
	Name string
	// ID is this member's identity, its Lease's holderIdentity.
	ID string
	// LeaseName is this member's Lease.
	LeaseName string
	// LeaseDuration is how long a member counts after its last renewal.
	LeaseDuration time.Duration
	// RenewPeriod is how often a member renews its Lease.
	RenewPeriod time.Duration
}

// Peer is a live member of the group, as its Lease says.
type Peer struct {
	ID     string
	Synced VSet
}

// Group is this replica's membership of a group of replicas that find each
// other through Leases, one per member: it keeps its own Lease renewed,
// carrying the ranges it has synced, and watches the others'.
type Group struct {
	cfg    GroupConfig
	client kubernetes.Interface
	leases coordinationlisters.LeaseNamespaceLister
	synced cache.InformerSynced
	// Changed receives a value when a member's Lease changes.
	Changed chan struct{}

	mu       sync.Mutex
	announce VSet
	lease    *coordinationv1.Lease
	dirty    chan struct{}
}

// NewGroup returns the membership of cfg's group, through client.
func NewGroup(client kubernetes.Interface, cfg GroupConfig) *Group {
	return &Group{cfg: cfg, client: client, Changed: make(chan struct{}, 1), dirty: make(chan struct{}, 1)}
}

// Join creates this member's Lease and starts watching the group's, until
// ctx ends; it returns once the Leases are listed.
func (g *Group) Join(ctx context.Context) error {
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: g.cfg.LeaseName, Namespace: g.cfg.Namespace, Labels: map[string]string{GroupLabel: g.cfg.Name},
			Annotations: map[string]string{FormatAnnotation: Format}},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(g.cfg.ID),
			LeaseDurationSeconds: ptr.To(int32((g.cfg.LeaseDuration + time.Second - 1) / time.Second)),
			AcquireTime:          ptr.To(metav1.NewMicroTime(time.Now())),
			RenewTime:            ptr.To(metav1.NewMicroTime(time.Now())),
		},
	}
	created, err := g.client.CoordinationV1().Leases(g.cfg.Namespace).Create(ctx, lease, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("shard group %s: create Lease %s/%s: %w", g.cfg.Name, g.cfg.Namespace, g.cfg.LeaseName, err)
	}
	g.lease = created
	factory := informers.NewSharedInformerFactoryWithOptions(g.client, 0, informers.WithNamespace(g.cfg.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = GroupLabel + "=" + g.cfg.Name }))
	inf := factory.Coordination().V1().Leases()
	signal := func(any) { notify(g.Changed) }
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: signal, DeleteFunc: signal, UpdateFunc: func(_, o any) { signal(o) },
	}); err != nil {
		return fmt.Errorf("shard group %s: Lease informer: %w", g.cfg.Name, err)
	}
	g.leases, g.synced = inf.Lister().Leases(g.cfg.Namespace), inf.Informer().HasSynced
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), g.synced) {
		return ctx.Err()
	}
	return nil
}

// notify sends on ch unless a value waits there already.
func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Peers are the live members: those whose Lease was renewed within its
// duration before now, and this member, whatever its Lease says.
func (g *Group) Peers(now time.Time) ([]Peer, error) {
	leases, err := g.leases.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	peers := []Peer{{ID: g.cfg.ID, Synced: g.announced()}}
	for _, l := range leases {
		id := ptr.Deref(l.Spec.HolderIdentity, "")
		if id == "" || id == g.cfg.ID || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil ||
			l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second).Before(now) {
			continue
		}
		peers = append(peers, Peer{ID: id, Synced: announcedSynced(l)})
	}
	return peers, nil
}

// Announce has this member's Lease say, at once, that it has synced s.
func (g *Group) Announce(s VSet) {
	g.mu.Lock()
	changed := g.announce != s
	g.announce = s
	g.mu.Unlock()
	if changed {
		notify(g.dirty)
	}
}

func (g *Group) announced() VSet {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.announce
}

// Renew renews this member's Lease every RenewPeriod, and at once when
// what it announces changes, until ctx ends; then it deletes the Lease, so
// that the other members take over its ranges without waiting for it to
// expire.
func (g *Group) Renew(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("lease", klog.KObj(g.lease))
	tick := time.NewTicker(g.cfg.RenewPeriod)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			g.leave(logger)
			return
		case <-tick.C:
		case <-g.dirty:
		}
		if err := g.renew(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "Cannot renew the shard Lease")
		}
		g.collect(ctx, logger)
	}
}

// collect deletes the Leases of members that died without deleting them
// (killed, or on a lost node), once expired for ten lease durations: no
// member counts them, but they would pile up. Members may race to delete
// the same Lease; the precondition lets only a Lease that nobody renewed
// meanwhile go.
func (g *Group) collect(ctx context.Context, logger klog.Logger) {
	leases, err := g.leases.List(labels.Everything())
	if err != nil {
		return
	}
	for _, l := range leases {
		if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil ||
			time.Since(l.Spec.RenewTime.Time) < 10*time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second {
			continue
		}
		err := g.client.CoordinationV1().Leases(l.Namespace).Delete(ctx, l.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To(l.ResourceVersion)},
		})
		if err == nil {
			logger.Info("Deleted the Lease of a member that died", "expiredLease", klog.KObj(l))
		}
	}
}

// renew writes renewTime and the announced ranges to this member's Lease.
func (g *Group) renew(ctx context.Context) error {
	leases := g.client.CoordinationV1().Leases(g.cfg.Namespace)
	l := g.lease.DeepCopy()
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[FormatAnnotation] = Format
	l.Annotations[SyncedAnnotation] = g.announced().String()
	l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now()))
	updated, err := leases.Update(ctx, l, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		// Changed or deleted by someone else: write it again from what is there.
		current, getErr := leases.Get(ctx, g.cfg.LeaseName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(getErr):
			l.ResourceVersion = ""
			updated, err = leases.Create(ctx, l, metav1.CreateOptions{})
		case getErr != nil:
			return getErr
		default:
			l.ResourceVersion = current.ResourceVersion
			updated, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		return err
	}
	g.lease = updated
	return nil
}

// leave deletes this member's Lease.
func (g *Group) leave(logger klog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := g.client.CoordinationV1().Leases(g.cfg.Namespace).Delete(ctx, g.cfg.LeaseName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		logger.Error(err, "Cannot delete the shard Lease; the others take over when it expires")
		return
	}
	logger.Info("Left the shard group")
}
