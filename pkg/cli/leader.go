package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// serviceAccountNamespace is where a Pod finds its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// leaderFlags configure leader election on a Lease.
type leaderFlags struct {
	enabled                             bool
	namespace, name                     string
	leaseDuration, renewDeadline, retry time.Duration
}

// inCluster reports whether the process runs in a Pod.
func inCluster() bool { return os.Getenv("KUBERNETES_SERVICE_HOST") != "" }

func addLeaderFlags(fs *pflag.FlagSet) *leaderFlags {
	f := &leaderFlags{}
	fs.BoolVar(&f.enabled, "leader-elect", inCluster(), "Elect a leader on a Lease so that only one replica writes (default on in a cluster, off elsewhere)")
	fs.StringVar(&f.namespace, "leader-election-namespace", "", "Namespace of the Lease (default: the Pod's namespace in a cluster, else \"default\")")
	fs.StringVar(&f.name, "leader-election-id", "kube-annotator", "Name of the Lease")
	fs.DurationVar(&f.leaseDuration, "leader-election-lease-duration", 15*time.Second, "How long a lease is valid without renewal; a new leader takes over at most this long after the old one vanished")
	fs.DurationVar(&f.renewDeadline, "leader-election-renew-deadline", 10*time.Second, "How long the leader keeps trying to renew before it gives up leading")
	fs.DurationVar(&f.retry, "leader-election-retry-period", 2*time.Second, "How often candidates try to acquire or renew the lease")
	return f
}

// leaseNamespace is the Lease's namespace.
func (f *leaderFlags) leaseNamespace() string {
	if f.namespace != "" {
		return f.namespace
	}
	return podNamespace()
}

// podNamespace is the namespace of the Pod the process runs in, or
// "default" outside a cluster.
func podNamespace() string {
	if data, err := os.ReadFile(serviceAccountNamespace); err == nil {
		if ns := strings.TrimSpace(string(data)); ns != "" {
			return ns
		}
	}
	return "default"
}

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

// withLeader runs lead while this process holds the lease, and returns when
// ctx ends (releasing the lease, so that another replica takes over at once)
// or leadership is lost. onLeading reports whether it currently leads.
func (f *leaderFlags) withLeader(ctx context.Context, cfg *rest.Config, onLeading func(bool), lead func(context.Context) error) error {
	if !f.enabled {
		onLeading(true)
		return lead(ctx)
	}
	cs, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return err
	}
	id, err := leaderIdentity()
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx).WithValues("lease", f.leaseNamespace()+"/"+f.name, "identity", id)

	leading := make(chan context.Context, 1)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: f.leaseNamespace(), Name: f.name},
			Client:     cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		},
		LeaseDuration:   f.leaseDuration,
		RenewDeadline:   f.renewDeadline,
		RetryPeriod:     f.retry,
		ReleaseOnCancel: true,
		Name:            f.name,
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
