package harness

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"

	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// VersionEnv names the environment variable that chooses the Kubernetes
// version the tests run on; Makefile and hack/envtest-assets.sh share it.
// Unset, the tests run on NewestK8sVersion.
const VersionEnv = "K8S_VERSION"

// NewestK8sVersion is the newest Kubernetes version the tests run on, the
// one hack/tools/k8s pins and `make test` uses.
const NewestK8sVersion = "1.37.2"

// K8sVersion returns the control-plane version the tests run on.
func K8sVersion() string {
	if v := os.Getenv(VersionEnv); v != "" {
		return v
	}
	return NewestK8sVersion
}

// Features is what an API server offers of the features kube-annotator
// degrades without, read from the server itself: tests choose what to
// assert from it, never from the version they were asked to run on.
type Features struct {
	// Version is the server's version, from /version, e.g. "v1.36.3".
	Version string
	// Minor is the server's minor version, e.g. 36.
	Minor int
	// MutatingAdmissionPolicyV1 says whether discovery lists
	// mutatingadmissionpolicies in admissionregistration.k8s.io/v1
	// (Kubernetes 1.36 and later).
	MutatingAdmissionPolicyV1 bool
	// ShardSelectorGate says whether the server knows the
	// ShardedListAndWatch feature gate (Kubernetes 1.36 and later, alpha,
	// off by default): an API server refuses to start with a gate it does
	// not know, and one without the gate ignores shard selectors.
	ShardSelectorGate bool
	// ShardSelectors says whether that gate is on on this server.
	ShardSelectors bool
}

// String is the one line a suite logs at start.
func (f Features) String() string {
	admission := "not served"
	if f.MutatingAdmissionPolicyV1 {
		admission = "served"
	}
	shards := "ignored (no ShardedListAndWatch gate)"
	switch {
	case f.ShardSelectors:
		shards = "applied (ShardedListAndWatch on)"
	case f.ShardSelectorGate:
		shards = "ignored (ShardedListAndWatch off)"
	}
	return fmt.Sprintf("kube-apiserver %s: MutatingAdmissionPolicy v1 %s, shard selectors %s", f.Version, admission, shards)
}

// readFeatures asks the API server at e.Config what it offers.
func (e *Env) readFeatures(ctx context.Context) (Features, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		return Features{}, err
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return Features{}, fmt.Errorf("read /version: %w", err)
	}
	f := Features{Version: info.GitVersion}
	if f.Minor, err = strconv.Atoi(strings.TrimSuffix(info.Minor, "+")); err != nil {
		return Features{}, fmt.Errorf("/version: minor %q: %w", info.Minor, err)
	}
	resources, err := dc.ServerResourcesForGroupVersion("admissionregistration.k8s.io/v1")
	if err != nil {
		return Features{}, fmt.Errorf("discover admissionregistration.k8s.io/v1: %w", err)
	}
	for _, r := range resources.APIResources {
		f.MutatingAdmissionPolicyV1 = f.MutatingAdmissionPolicyV1 || r.Name == "mutatingadmissionpolicies"
	}
	// kubernetes_feature_enabled has a series for every gate the server
	// knows, 1 when on.
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return Features{}, err
	}
	body, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return Features{}, fmt.Errorf("read /metrics: %w", err)
	}
	const gate = `kubernetes_feature_enabled{name="ShardedListAndWatch"`
	f.ShardSelectorGate = strings.Contains(string(body), gate)
	f.ShardSelectors = promtext.MetricValue(body, "kubernetes_feature_enabled", map[string]string{"name": "ShardedListAndWatch"}) == 1
	return f, nil
}
