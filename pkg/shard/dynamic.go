package shard

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
)

// Dynamic keeps a shard's ranges current as members of its group come and
// go. Every member assigns the virtual ranges from the same list of live
// members (Assign), so they agree without a leader. A range changes hands
// without a gap: its new owner adds it to the ranges it serves and
// announces it once its informers have synced; the previous owner serves
// it until then.
type Dynamic struct {
	shard  *Shard
	group  *Group
	period time.Duration
	logger klog.Logger

	// serving are the virtual ranges the informers were last built on;
	// synced, those whose informers have synced (serving, or nothing
	// before the first sync).
	serving, synced VSet
	ready           atomic.Bool
	// renewed is closed when the Lease is no longer renewed (deleted).
	renewed chan struct{}
}

// NewDynamic returns what keeps shard's ranges current in group,
// checking the members every period and whenever a Lease changes.
func NewDynamic(shard *Shard, group *Group, period time.Duration) *Dynamic {
	return &Dynamic{shard: shard, group: group, period: period, logger: shard.logger, renewed: make(chan struct{})}
}

// Join joins the group and sets the shard's first ranges: after one
// renew period, so that replicas started together see each other and
// start on their own shares rather than on all of it.
func (d *Dynamic) Join(ctx context.Context) error {
	if err := d.group.Join(ctx); err != nil {
		return err
	}
	go func() {
		defer close(d.renewed)
		d.group.Renew(ctx)
	}()
	select {
	case <-ctx.Done():
		<-d.renewed
		return ctx.Err()
	case <-time.After(d.period):
	}
	peers, err := d.group.Peers(time.Now())
	if err != nil {
		return err
	}
	d.serving = d.assigned(peers)
	d.setRanges(d.serving)
	d.logger.Info("Joined the shard group", "members", len(peers), "virtualRanges", d.serving.Len())
	return nil
}

// Ready reports whether the informers of every range this member owns
// have synced.
func (d *Dynamic) Ready() error {
	if !d.ready.Load() {
		return errors.New("shard not synced")
	}
	return nil
}

// Run keeps the ranges current until ctx ends, and returns once the
// Lease is deleted; Join must have succeeded. synced reports whether the
// informers built on the first ranges have synced; reshard rebuilds them on
// the shard's current ranges and returns once they have synced.
func (d *Dynamic) Run(ctx context.Context, synced func() bool, reshard func(context.Context) error) error {
	tick := time.NewTicker(d.period)
	defer tick.Stop()
	defer func() { <-d.renewed }()
	for {
		if err := d.step(ctx, synced, reshard); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-d.group.Changed:
		}
	}
}

// step reads the live members, announces the owned ranges that have
// synced, and rebuilds the informers when the ranges to serve changed.
func (d *Dynamic) step(ctx context.Context, synced func() bool, reshard func(context.Context) error) error {
	if d.synced == (VSet{}) && synced() {
		d.synced = d.serving
	}
	peers, err := d.group.Peers(time.Now())
	if err != nil {
		return err
	}
	owned := d.assigned(peers)
	d.shard.metrics.Members.Set(float64(len(peers)))
	d.announce(owned)
	want := d.toServe(peers, owned)
	if want == d.serving || d.synced != d.serving {
		return nil
	}
	d.logger.Info("Shard ranges changed", "members", len(peers), "owned", owned.Len(), "serving", want.Len(), "was", d.serving.Len())
	d.setRanges(want)
	if err := reshard(ctx); err != nil {
		return err
	}
	d.shard.metrics.Reshards.Inc()
	d.serving, d.synced = want, want
	d.announce(d.assigned(peers))
	return nil
}

// assigned are the virtual ranges peers assign this member.
func (d *Dynamic) assigned(peers []Peer) VSet {
	return Assign(peerIDs(peers)).Of(d.group.cfg.ID)
}

// toServe are the ranges to serve: those owned, and those served now whose
// new owner has not announced that it synced them.
func (d *Dynamic) toServe(peers []Peer, owned VSet) VSet {
	a := Assign(peerIDs(peers))
	syncedBy := make(map[string]VSet, len(peers))
	for _, p := range peers {
		syncedBy[p.ID] = p.Synced
	}
	want := owned
	for v := range VirtualRanges {
		if d.serving.Has(v) && !owned.Has(v) && !syncedBy[a.OwnerOf(v)].Has(v) {
			want.Add(v)
		}
	}
	return want
}

// announce announces the owned ranges that have synced, and records
// whether they are all of them.
func (d *Dynamic) announce(owned VSet) {
	done := owned.Intersect(d.synced)
	d.group.Announce(done)
	d.ready.Store(done == owned)
	d.shard.metrics.OwnedFraction.Set(owned.Ranges().Fraction())
}

// setRanges makes serve the shard's ranges.
func (d *Dynamic) setRanges(serve VSet) {
	rs := serve.Ranges()
	d.shard.SetRanges(rs)
	d.shard.metrics.Ranges.Set(float64(len(rs)))
	d.shard.metrics.ServingFraction.Set(rs.Fraction())
}

func peerIDs(peers []Peer) []string {
	ids := make([]string, len(peers))
	for i, p := range peers {
		ids[i] = p.ID
	}
	return slices.Clip(ids)
}
