package harness

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Priority and Fairness and RBAC resources.
var (
	PriorityLevels      = schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "prioritylevelconfigurations"}
	FlowSchemas         = schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas"}
	ClusterRoleBindings = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
)

// ThrottleUser has the API server's Priority and Fairness put every
// request of user in a priority level of its own, name, with shares
// nominal concurrency shares, nothing lent or borrowed and no queues: a
// request beyond its few seats is rejected at once with 429 Too Many
// Requests. It returns the seats the API server gave the level, once the
// configuration is in force.
func (e *Env) ThrottleUser(t testing.TB, name, user string, shares int) float64 {
	t.Helper()
	e.Create(t, PriorityLevels, "", FromYAML(t, fmt.Sprintf(`
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: %s}
spec:
  type: Limited
  limited:
    nominalConcurrencyShares: %d
    lendablePercent: 0
    borrowingLimitPercent: 0
    limitResponse: {type: Reject}
`, name, shares)))
	e.Create(t, FlowSchemas, "", FromYAML(t, fmt.Sprintf(`
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata: {name: %[1]s}
spec:
  priorityLevelConfiguration: {name: %[1]s}
  matchingPrecedence: 500
  distinguisherMethod: {type: ByUser}
  rules:
  - subjects: [{kind: User, user: {name: %[2]s}}]
    resourceRules: [{verbs: ["*"], apiGroups: ["*"], resources: ["*"], namespaces: ["*"], clusterScope: true}]
    nonResourceRules: [{verbs: ["*"], nonResourceURLs: ["*"]}]
`, name, user)))
	var seats float64
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		seats, err = e.ServerMetric(ctx, "apiserver_flowcontrol_nominal_limit_seats", map[string]string{"priority_level": name})
		return err == nil && seats > 0, nil
	})
	if err != nil {
		t.Fatalf("priority level %s not in force after 30s", name)
	}
	return seats
}

// GrantClusterAdmin binds the cluster-admin ClusterRole to user, for a
// client that impersonates user (kubectl's --as).
func (e *Env) GrantClusterAdmin(t testing.TB, user string) {
	t.Helper()
	e.Create(t, ClusterRoleBindings, "", FromYAML(t, fmt.Sprintf(`
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[1]s-cluster-admin}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: %[1]s}]
`, user)))
}
