package controller

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-annotator/kube-annotator/pkg/controller/internal/fixture"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
)

// refVolumes is how many PersistentVolumes BenchmarkRefSource builds,
// each bound to a claim of its own.
const refVolumes = 10000

// refCases are the rules BenchmarkRefSource compares. Each sets team on
// every PersistentVolume, which carries it already; the last reads a
// label no claim has, so that each sync counts the key as not set, by
// reason, in the per-rule gauges.
var refCases = []struct{ name, rules string }{
	{"literal", "rules:\n- {name: r, resources: [persistentvolumes], labels: {team: payments}}\n"},
	{"fromRef", "rules:\n- {name: r, resources: [persistentvolumes], labels: {team: {fromRef: {resource: persistentvolumeclaims, field: spec.claimRef, label: team}}}}\n"},
	{"fromRef-unset", "rules:\n- {name: r, resources: [persistentvolumes], labels: {team: payments, cost: {fromRef: {resource: persistentvolumeclaims, field: spec.claimRef, label: cost-center}}}}\n"},
}

// BenchmarkRefSource measures what reading a PersistentVolume's value
// from the claim its spec.claimRef names costs against a literal rule,
// and what counting a key not set by reason adds: 10,000 volumes, each
// bound to its own claim, labelled and annotated as a provisioner and
// Helm leave them, every volume carrying what the rule wants. For each
// rule a controller starts and decides every volume; the heap it then
// holds is compared (heap-B/claim: what reading claims adds, per claim
// cached), and a sub-benchmark times one sync of a volume, round robin,
// with the per-rule gauges it keeps (ns/op, allocs/op). Run it with
// -bench RefSource -benchtime 20000x.
func BenchmarkRefSource(b *testing.B) {
	client := newClient(boundVolumes()...)
	keys := make([]Key, refVolumes)
	for i := range keys {
		keys[i] = Key{GVR: persistentVolumes, Name: fmt.Sprintf("pvc-%05d", i)}
	}
	benchRelated(b, client, refCases, compileVolumes, keys, "volume", "claim", refVolumes)
}

// boundVolumes returns refVolumes PersistentVolumes, each bound to a
// claim in namespace shop, as a CSI provisioner leaves them and carrying
// team: payments, set by this controller; and their claims, as Helm and
// the binder leave them, labelled team: payments.
func boundVolumes() []*unstructured.Unstructured {
	objs := make([]*unstructured.Unstructured, 0, 2*refVolumes)
	for i := range refVolumes {
		name, app := fmt.Sprintf("pvc-%05d", i), fmt.Sprintf("db-%04d", i/3)
		claim := fixture.Object("PersistentVolumeClaim", "shop", "data-"+name, nil)
		claim.SetUID(types.UID("claim-" + name))
		claim.SetLabels(helmLabels(app, app))
		claim.SetAnnotations(map[string]string{"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes",
			"volume.beta.kubernetes.io/storage-provisioner": "ebs.csi.aws.com", "volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com",
			"volume.kubernetes.io/selected-node": fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i%4, i%250)})
		claim.Object["spec"] = map[string]any{"accessModes": []any{"ReadWriteOnce"}, "storageClassName": "gp3", "volumeName": name,
			"resources": map[string]any{"requests": map[string]any{"storage": "20Gi"}}}
		pv := volume(name, claim.GetName(), string(claim.GetUID()))
		pv.SetLabels(map[string]string{"team": "payments", "topology.kubernetes.io/zone": fmt.Sprintf("us-east-1%c", 'a'+i%3)})
		pv.SetAnnotations(map[string]string{"pv.kubernetes.io/provisioned-by": "ebs.csi.aws.com", "volume.kubernetes.io/provisioner-deletion-secret-name": "",
			"volume.kubernetes.io/provisioner-deletion-secret-namespace": ""})
		pv.SetManagedFields([]metav1.ManagedFieldsEntry{fixture.OwnedFields(reconcile.FieldManager, nil, []string{"team"})})
		objs = append(objs, claim, pv)
	}
	return objs
}
