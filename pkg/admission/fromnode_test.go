package admission

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
)

// pods and podMarker are the resource and marker of the test of values
// read from a Pod's Node, which admission leaves to the controller.
var pods = rulestest.Pods.GVR

const podMarker = "pods.admission.kube-annotator.io/kube-annotator"

// pod is a Pod not yet scheduled, as it is created.
func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
}

// podWith is a Pod with containers of these names.
func podWith(names ...string) *corev1.Pod {
	p := pod("ns", "p")
	p.Spec.Containers = nil
	for _, n := range names {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: n, Image: "nginx"})
	}
	return p
}

// withAnnotations sets p's annotations.
func withAnnotations(p *corev1.Pod, anns map[string]string) *corev1.Pod {
	p.Annotations = anns
	return p
}

// withLabels sets p's labels.
func withLabels(p *corev1.Pod, lbls map[string]string) *corev1.Pod {
	p.Labels = lbls
	return p
}
