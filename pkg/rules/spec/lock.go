package spec

// Lock says who may set, change or remove the keys of a locked rule: the
// users (by name) and the members of the groups listed, none else.
type Lock struct {
	Users, Groups []string
}

// DefaultLockUsers and DefaultLockGroups are those a rule given
// locked: true allows: the controller's ServiceAccount, as deploy/ installs
// it, and cluster admins.
var (
	DefaultLockUsers  = []string{"system:serviceaccount:kube-annotator:kube-annotator"}
	DefaultLockGroups = []string{"system:masters", "kubeadm:cluster-admins"}
)
