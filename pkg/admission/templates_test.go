package admission

import (
	"maps"
	"os"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

// templateRules ask for pod templates: a literal label, a value recorded
// from the request and one read from the Pod's spec (set in templates),
// a value read from the Pod's Node (not: admission cannot read it), and
// one read from a ConfigMap of the namespace (not: the Pod's own policy
// reads it, as its params).
const templateRules = `rules:
- name: team
  resources: [pods]
  selector: app=web
  podTemplates: true
  labels:
    team: a
    zone: {fromNode: {label: zone}}
    owner: {fromRef: {resource: configmaps, name: team-defaults, data: owner}}
  annotations:
    created-by: {cel: request.userInfo.username, once: true, default: unknown}
    image: {jsonPath: '{.spec.containers[0].image}'}
`

var cronJobs = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}

// A podTemplates rule's keys are set in the pod templates of the
// workloads created, as the rule selects their Pods, with the Pod marker
// listing them; never at UPDATE, nor in a template that opts out, nor on
// the workload's own metadata.
func TestTemplatePolicy(t *testing.T) {
	set := rulestest.Compile(t, templateRules, served...)
	policies, notes, err := Translate(set, options())
	if err != nil {
		t.Fatal(err)
	}
	var names, gotNotes []string
	for _, p := range policies {
		names = append(names, p.Policy.Name)
	}
	for _, n := range notes {
		gotNotes = append(gotNotes, n.String())
	}
	if want := []string{"kube-annotator.team", "kube-annotator.team.configmaps.team-defaults", "kube-annotator.team.pod-templates"}; !slices.Equal(names, want) {
		t.Fatalf("policies %q, want %q", names, want)
	}
	wantNote := "rule team: podTemplates: labels.zone is not set in pod templates: a value read from the Pod's Node is set by the controller only: admission policies cannot read a Node, and a Pod has none yet when it is created; the Pods get it as the rule says"
	wantParamNote := `rule team: podTemplates: labels.owner is not set in pod templates: it is read from ConfigMap "team-defaults", which that policy does not read; the Pods get it as the rule says`
	if !slices.Contains(gotNotes, wantNote) || !slices.Contains(gotNotes, wantParamNote) {
		t.Errorf("notes %q, want among them %q and %q", gotNotes, wantNote, wantParamNote)
	}
	tp := compilePolicy(t, policies[2].Policy)
	alice := &user.DefaultInfo{Name: "alice"}
	web := map[string]string{"app": "web"}
	tests := []struct {
		name     string
		gvr      schema.GroupVersionResource
		obj, old runtime.Object
		// want are the template's annotations and labels after admission;
		// nil: as they were.
		wantAnns, wantLabels map[string]string
	}{
		{name: "a Deployment created", gvr: deployments, obj: withTemplate(deployment("ns", "d", 1, "nginx"), nil, web),
			wantAnns:   map[string]string{"created-by": "alice", "image": "nginx", podMarker: "created-by,image,label:team"},
			wantLabels: map[string]string{"app": "web", "team": "a"}},
		{name: "a CronJob created", gvr: cronJobs, obj: cronJob(nil, web),
			wantAnns:   map[string]string{"created-by": "alice", "image": "busybox", podMarker: "created-by,image,label:team"},
			wantLabels: map[string]string{"app": "web", "team": "a"}},
		{name: "what the template has: recorded kept, literal set", gvr: deployments,
			obj:        withTemplate(deployment("ns", "d", 1, "nginx"), map[string]string{"created-by": "bob"}, map[string]string{"app": "web", "team": "b"}),
			wantAnns:   map[string]string{"created-by": "bob", "image": "nginx", podMarker: "image,label:team"},
			wantLabels: map[string]string{"app": "web", "team": "a"}},
		{name: "Pods the rule does not select", gvr: deployments, obj: withTemplate(deployment("ns", "d", 1, "nginx"), nil, map[string]string{"app": "db"})},
		{name: "a template that opts out", gvr: deployments,
			obj: withTemplate(deployment("ns", "d", 1, "nginx"), map[string]string{"kube-annotator.io/ignore": "true"}, web)},
		{name: "updated: never written", gvr: deployments,
			old: withTemplate(deployment("ns", "d", 1, "nginx"), nil, web), obj: withTemplate(deployment("ns", "d", 2, "nginx"), nil, web)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := tp.run(t, admit{gvr: tc.gvr, obj: tc.obj, old: tc.old, ns: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, user: alice})
			if err != nil {
				t.Fatalf("the policy failed: %v", err)
			}
			before, after := template(t, tc.obj), template(t, out)
			wantAnns, wantLabels := tc.wantAnns, tc.wantLabels
			if wantAnns == nil && wantLabels == nil {
				wantAnns, wantLabels = before.Annotations, before.Labels
			}
			if !maps.Equal(after.Annotations, wantAnns) || !maps.Equal(after.Labels, wantLabels) {
				t.Errorf("template: annotations %v, labels %v; want %v, %v", after.Annotations, after.Labels, wantAnns, wantLabels)
			}
			if m := out.(metav1.Object); len(m.GetAnnotations())+len(m.GetLabels()) > 0 {
				t.Errorf("the workload's own metadata was written: %v, %v", m.GetAnnotations(), m.GetLabels())
			}
		})
	}
}

// withTemplate sets the annotations and labels of d's pod template.
func withTemplate(d *appsv1.Deployment, anns, lbls map[string]string) *appsv1.Deployment {
	d.Spec.Template.Annotations, d.Spec.Template.Labels = anns, lbls
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: lbls}
	return d
}

// cronJob is a CronJob whose pod template has anns and lbls.
func cronJob(anns, lbls map[string]string) *batchv1.CronJob {
	c := &batchv1.CronJob{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
	c.Spec.Schedule = "* * * * *"
	tmpl := &c.Spec.JobTemplate.Spec.Template
	tmpl.Annotations, tmpl.Labels = anns, lbls
	tmpl.Spec.Containers = []corev1.Container{{Name: "c", Image: "busybox"}}
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	return c
}

// template returns the metadata of obj's pod template.
func template(t *testing.T, obj runtime.Object) metav1.ObjectMeta {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	path := []string{"spec", "template", "metadata"}
	if obj.GetObjectKind().GroupVersionKind().Kind == "CronJob" {
		path = []string{"spec", "jobTemplate", "spec", "template", "metadata"}
	}
	m, _, err := unstructured.NestedMap(u, path...)
	if err != nil {
		t.Fatal(err)
	}
	var meta metav1.ObjectMeta
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &meta); err != nil {
		t.Fatal(err)
	}
	return meta
}

// A podTemplates rule's when condition reads the template as it reads a
// Pod (Kyverno's add-safe-to-evict, with its autogen): the keys go into
// the templates whose Pods the rule selects.
func TestTemplatePolicyWhen(t *testing.T) {
	set := rulestest.Compile(t, `rules:
- name: safe-to-evict
  resources: [pods]
  podTemplates: true
  when: object.spec.?volumes.orValue([]).exists(v, has(v.emptyDir) || has(v.hostPath))
  annotations: {cluster-autoscaler.kubernetes.io/safe-to-evict: "true"}
`, served...)
	policies, _, err := Translate(set, options())
	if err != nil {
		t.Fatal(err)
	}
	if len(policies) != 2 {
		t.Fatalf("%d policies, want the Pods' and the templates'", len(policies))
	}
	tp := compilePolicy(t, policies[1].Policy)
	emptyDir := withTemplate(deployment("ns", "d", 1, "nginx"), nil, map[string]string{"app": "web"})
	emptyDir.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	hostPath := cronJob(nil, nil)
	hostPath.Spec.JobTemplate.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}}}
	safe := map[string]string{"cluster-autoscaler.kubernetes.io/safe-to-evict": "true", podMarker: "cluster-autoscaler.kubernetes.io/safe-to-evict"}
	tests := []struct {
		name string
		gvr  schema.GroupVersionResource
		obj  runtime.Object
		want map[string]string // the template's annotations after admission
	}{
		{"a Deployment with an emptyDir", deployments, emptyDir, safe},
		{"a CronJob with a hostPath", cronJobs, hostPath, safe},
		{"a Deployment without", deployments, withTemplate(deployment("ns", "d", 1, "nginx"), nil, map[string]string{"app": "web"}), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := tp.run(t, admit{gvr: tc.gvr, obj: tc.obj, ns: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}})
			if err != nil {
				t.Fatalf("the policy failed: %v", err)
			}
			if got := template(t, out).Annotations; !maps.Equal(got, tc.want) {
				t.Errorf("template annotations %v, want %v", got, tc.want)
			}
		})
	}
}

// examples/velero-backup-volumes.yaml: the names of a Pod's claimed
// volumes, computed in CEL from the Pod, are computed from the template
// as from the Pod.
func TestTemplatePolicyVolumes(t *testing.T) {
	example, err := os.ReadFile("../../examples/velero-backup-volumes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	set := rulestest.Compile(t, string(example), served...)
	policies, _, err := Translate(set, options())
	if err != nil {
		t.Fatal(err)
	}
	if len(policies) != 2 {
		t.Fatalf("%d policies, want the Pods' and the templates'", len(policies))
	}
	d := withTemplate(deployment("ns", "d", 1, "nginx"), nil, map[string]string{"app": "db"})
	claim := func(name string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name + "-claim"}}}
	}
	d.Spec.Template.Spec.Volumes = []corev1.Volume{claim("data"), {Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}, claim("logs")}
	out, _, err := compilePolicy(t, policies[1].Policy).run(t, admit{gvr: deployments, obj: d, ns: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}})
	if err != nil {
		t.Fatalf("the policy failed: %v", err)
	}
	want := map[string]string{"backup.velero.io/backup-volumes": "data,logs", podMarker: "backup.velero.io/backup-volumes"}
	if got := template(t, out).Annotations; !maps.Equal(got, want) {
		t.Errorf("template annotations %v, want %v", got, want)
	}
}
