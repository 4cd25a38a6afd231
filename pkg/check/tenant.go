package check

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
	"github.com/kube-annotator/kube-annotator/pkg/tenants"
)

// Tenant is a check of one tenant's rules file, as the controller checks
// it: against the limits of the main rules file's tenants section
// (tenants.Check), then compiled after the main file's rules
// (tenants.Compose), so that the tenant learns of a conflict too.
type Tenant struct {
	// MainPath is the main rules file's path; Main the file, whose
	// Tenants section is set.
	MainPath string
	Main     *rulefile.File
	// Namespace is the tenant's.
	Namespace string
	// Path, when set, is the tenant's file, read instead of its ConfigMap.
	Path string
	// Client reads the tenant's ConfigMap and Namespace; nil offline,
	// when Path is set and the namespace selector is not evaluated.
	Client kubernetes.Interface
	// Resolver resolves the rules' names and schemas, on the cluster or
	// offline.
	Resolver *resolve.Resolver
}

// Check checks the tenant's file and reports on r, a report on the main
// file, which becomes the report on the tenant's: its problems are the
// refusals, why the file cannot be read or why the controller reads none,
// its Status the text the controller writes on the ConfigMap
// (tenants.StatusAnnotation). It returns the warnings for r, which it
// does not add: offline, that the namespace selector is not evaluated.
// An error is no verdict, and leaves r as it is: the main file's rules
// do not compile, or, matching resolve.ErrUnreachable, the cluster could
// not be asked.
func (t *Tenant) Check(ctx context.Context, r *Report) ([]rulefile.FieldError, error) {
	limits := t.Main.Tenants
	if err := t.compile(t.Main); err != nil {
		return nil, err
	}
	admitted, err := t.admitted(ctx, limits)
	if err != nil {
		return nil, err
	}
	f, found, err := t.file(ctx, limits)
	if err != nil {
		return nil, err
	}
	var results []tenants.Result
	if found {
		results = []tenants.Result{tenants.Check(limits, f)}
		tenants.Compose(t.Main, results, t.compile)
		if errors.Is(results[0].Err, resolve.ErrUnreachable) {
			return nil, results[0].Err
		}
	}
	r.File, r.Tenant = cmp.Or(t.Path, f.Name()), t.Namespace
	if found {
		r.Status = results[0].Status()
		r.addTenant(results[0])
	} else {
		r.File = "namespace " + t.Namespace
		r.lead = append(r.lead, r.addMessage(SeverityError, noConfigMap(t.Namespace, limits)))
	}
	if !admitted {
		r.lead = append(r.lead, r.addMessage(SeverityError, fmt.Sprintf(
			"namespace %s is not one tenants.namespaceSelector (%s) admits: the controller reads no rules file there", t.Namespace, limits.NamespaceSelector)))
	}
	if t.Client == nil && limits.NamespaceSelector != "" {
		return []rulefile.FieldError{{Message: fmt.Sprintf("namespace %s: tenants.namespaceSelector (%s) is not checked offline: "+
			"whether it admits the namespace is the cluster's to say", t.Namespace, limits.NamespaceSelector)}}, nil
	}
	return nil, nil
}

// compile compiles f as the controller does (resolve.Compile).
func (t *Tenant) compile(f *spec.File) error {
	_, _, err := resolve.Compile(t.MainPath, f, t.Resolver.Resolve, t.Resolver.Schema, nil)
	return err
}

// addTenant adds to r what of the tenant's file res says is refused, or
// why none of it is in force.
func (r *Report) addTenant(res tenants.Result) {
	r.Valid = res.Err == nil
	if r.Valid {
		r.Rules = res.Total
	}
	for _, ref := range res.Refused {
		r.Problems = append(r.Problems, Problem{Severity: SeverityError, Path: ref.Field, Line: ref.Line, Message: ref.Message})
	}
	var invalid *rulefile.Error
	switch {
	case errors.As(res.Err, &invalid):
		r.Add(SeverityError, invalid.Fields)
	case res.Err != nil:
		r.addMessage(SeverityError, res.Err.Error())
	}
}

// addMessage adds to r a problem of severity with the file as a whole, saying
// msg, and returns msg.
func (r *Report) addMessage(severity, msg string) string {
	r.Problems = append(r.Problems, Problem{Severity: severity, Message: msg})
	return msg
}

// admitted reports whether limits' namespaceSelector admits the tenant's
// namespace; offline, or with no selector, true.
func (t *Tenant) admitted(ctx context.Context, limits *spec.Tenants) (bool, error) {
	if t.Client == nil || limits.NamespaceSelector == "" {
		return true, nil
	}
	sel, err := labels.Parse(limits.NamespaceSelector)
	if err != nil {
		return false, fmt.Errorf("tenants.namespaceSelector: %w", err)
	}
	ns, err := t.Client.CoreV1().Namespaces().Get(ctx, t.Namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%w: get namespace %s: %w", resolve.ErrUnreachable, t.Namespace, err)
	}
	return sel.Matches(labels.Set(ns.Labels)), nil
}

// file returns the tenant's file: the one at Path, else the one in its
// ConfigMap, by name or the first by name that the selector finds, as the
// controller picks it (tenants.Pick); found is false when there is no
// such ConfigMap.
func (t *Tenant) file(ctx context.Context, limits *spec.Tenants) (f tenants.File, found bool, err error) {
	f = tenants.File{Namespace: t.Namespace, ConfigMap: limits.ConfigMap}
	if t.Path != "" {
		f.ConfigMap = cmp.Or(limits.ConfigMap, t.Path)
		f.Data, err = rulefile.Read(t.Path)
		return f, err == nil, err
	}
	cms, err := t.configMaps(ctx, limits)
	if err != nil {
		return f, false, err
	}
	files := tenants.Pick(limits, cms, func(string) bool { return true })
	if len(files) == 0 {
		return f, false, nil
	}
	return files[0], true, nil
}

// configMaps gets the tenant's ConfigMaps: the one named, or those the
// selector finds; none when there is none.
func (t *Tenant) configMaps(ctx context.Context, limits *spec.Tenants) ([]*corev1.ConfigMap, error) {
	cms := t.Client.CoreV1().ConfigMaps(t.Namespace)
	if limits.ConfigMap != "" {
		cm, err := cms.Get(ctx, limits.ConfigMap, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: get configmap %s/%s: %w", resolve.ErrUnreachable, t.Namespace, limits.ConfigMap, err)
		}
		return []*corev1.ConfigMap{cm}, nil
	}
	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: limits.ConfigMapSelector})
	if err != nil {
		return nil, fmt.Errorf("%w: list configmaps in %s (%s): %w", resolve.ErrUnreachable, t.Namespace, limits.ConfigMapSelector, err)
	}
	out := make([]*corev1.ConfigMap, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// noConfigMap says that namespace has no ConfigMap of the tenant's rules
// file, and where it goes.
func noConfigMap(namespace string, limits *spec.Tenants) string {
	where := "configmap " + namespace + "/" + limits.ConfigMap
	if limits.ConfigMap == "" {
		where = fmt.Sprintf("configmap in %s that tenants.configMapSelector (%s) finds", namespace, limits.ConfigMapSelector)
	}
	return fmt.Sprintf("no %s: the tenant's rules file goes there, under the key %q of its data", where, limits.Key)
}
