package harness

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
)

// APIServerProfile takes a CPU profile of kube-apiserver over d, in
// pprof's format (`go tool pprof -top FILE`), from its /debug/pprof, which
// kube-apiserver serves with --profiling (its default) to the
// administrator the harness connects as. It returns after d.
func (e *Env) APIServerProfile(ctx context.Context, d time.Duration) ([]byte, error) {
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return nil, err
	}
	seconds := max(int(d.Round(time.Second)/time.Second), 1)
	body, err := cs.RESTClient().Get().AbsPath("/debug/pprof/profile").
		Param("seconds", fmt.Sprint(seconds)).Timeout(d + time.Minute).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("read /debug/pprof/profile: %w", err)
	}
	return body, nil
}
