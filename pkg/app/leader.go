package app

import (
	"context"
	"errors"
	"fmt"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// leaderIdentity names this process in the Lease: its host, and a UUID
// that tells it from an earlier process on the same host.
func leaderIdentity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("leader election identity: %w", err)
	}
	return host + "_" + string(uuid.NewUUID()), nil
}

// errLeadershipLost ends the process: another replica may be writing now.
var errLeadershipLost = errors.New("leader election lost")

// withLeader runs lead while this process holds the lease that cfg names,
// through cs, and returns when ctx ends (releasing the lease, so that
// another replica takes over at once) or leadership is lost. onLeading
// reports whether it currently leads. Without leader election it leads at
// once.
func withLeader(ctx context.Context, cs kubernetes.Interface, cfg LeaderConfig, onLeading func(bool), lead func(context.Context) error) error {
	if !cfg.Enabled {
		onLeading(true)
		return lead(ctx)
	}
	id, err := leaderIdentity()
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx).WithValues("lease", cfg.Namespace+"/"+cfg.Name, "identity", id)

	leading := make(chan context.Context, 1)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: cfg.Namespace, Name: cfg.Name},
			Client:     cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		},
		LeaseDuration:   cfg.LeaseDuration,
		RenewDeadline:   cfg.RenewDeadline,
		RetryPeriod:     cfg.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            cfg.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			// Leading is done below, on this goroutine, so that it is known
			// to have finished before withLeader returns.
			OnStartedLeading: func(lctx context.Context) { leading <- lctx },
			OnStoppedLeading: func() { onLeading(false) },
			OnNewLeader: func(identity string) {
				if identity != id {
					logger.Info("Another replica leads; standing by", "leader", identity)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	logger.Info("Waiting to lead")
	electionDone := make(chan struct{})
	go func() {
		defer close(electionDone)
		le.Run(ctx) // returns when ctx ends or the lease is lost
	}()
	select {
	case <-electionDone:
		return nil // ctx ended before this replica led
	case lctx := <-leading:
		logger.Info("Leading")
		onLeading(true)
		err := lead(lctx) // returns when ctx ends or the lease is lost
		<-electionDone
		if err != nil {
			return err
		}
		if ctx.Err() == nil {
			return errLeadershipLost
		}
		return nil
	}
}
