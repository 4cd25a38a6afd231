package tenants

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// ListOptions narrow a list or watch of ConfigMaps to those limits names:
// by name (a metadata.name field selector) or by label selector.
func ListOptions(limits *spec.Tenants, o *metav1.ListOptions) {
	if limits.ConfigMap != "" {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", limits.ConfigMap).String()
	} else {
		o.LabelSelector = limits.ConfigMapSelector
	}
}

// Pick returns the tenants' files of configMaps, those ListOptions
// narrow to: one per namespace admitted (the first ConfigMap by name, when
// a selector finds several), sorted by namespace.
func Pick(limits *spec.Tenants, configMaps []*corev1.ConfigMap, admitted func(namespace string) bool) []File {
	byNS := map[string]*corev1.ConfigMap{}
	for _, cm := range configMaps {
		if prev := byNS[cm.Namespace]; admitted(cm.Namespace) && (prev == nil || cm.Name < prev.Name) {
			byNS[cm.Namespace] = cm
		}
	}
	out := make([]File, 0, len(byNS))
	for _, ns := range slices.Sorted(maps.Keys(byNS)) {
		cm := byNS[ns]
		data, ok := cm.Data[limits.Key]
		out = append(out, File{Namespace: ns, ConfigMap: cm.Name, UID: string(cm.UID), Data: []byte(data), Missing: !ok,
			Confirm: cm.Annotations[ConfirmAnnotation]})
	}
	return out
}

// List lists the tenants' files in the cluster once, as the controller
// caches them: for the commands that converge or compare once.
func List(ctx context.Context, client kubernetes.Interface, limits *spec.Tenants) ([]File, error) {
	opts := metav1.ListOptions{}
	ListOptions(limits, &opts)
	list, err := client.CoreV1().ConfigMaps(metav1.NamespaceAll).List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("listing the tenants' ConfigMaps: %w", err)
	}
	admitted := func(string) bool { return true }
	if limits.NamespaceSelector != "" {
		sel, err := labels.Parse(limits.NamespaceSelector)
		if err != nil {
			return nil, fmt.Errorf("tenants.namespaceSelector: %w", err)
		}
		nss, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			return nil, fmt.Errorf("listing the tenants' namespaces: %w", err)
		}
		in := map[string]bool{}
		for _, ns := range nss.Items {
			in[ns.Name] = true
		}
		admitted = func(ns string) bool { return in[ns] }
	}
	cms := make([]*corev1.ConfigMap, len(list.Items))
	for i := range list.Items {
		cms[i] = &list.Items[i]
	}
	return Pick(limits, cms, admitted), nil
}

// CheckAll checks each of files against limits.
func CheckAll(limits *spec.Tenants, files []File) []Result {
	out := make([]Result, len(files))
	for i, f := range files {
		out[i] = Check(limits, f)
	}
	return out
}
