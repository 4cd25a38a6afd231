package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/policysync"
	"github.com/kube-annotator/kube-annotator/pkg/reconcile"
	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// recordFlags name the field manager the commands that write (or show
// what they would write) act as, and its record of the resources written
// to (package record).
type recordFlags struct {
	fieldManager string
	namespace    string
}

func addRecordFlags(fs *pflag.FlagSet) *recordFlags {
	f := &recordFlags{}
	fieldManagerVar(fs, &f.fieldManager)
	fs.StringVar(&f.namespace, "record-namespace", "",
		"Namespace of the ConfigMap that records the resources written to (default: the Pod's namespace in a cluster, else \"default\")")
	return f
}

// validateFieldManager reports, naming the flag, a field manager that
// cannot be used.
func validateFieldManager(manager string) error {
	if err := record.ValidateFieldManager(manager); err != nil {
		return fmt.Errorf("--field-manager: %w", err)
	}
	return nil
}

// validate reports, naming the flag, a flag that cannot be used.
func (f *recordFlags) validate() error {
	if err := validateFieldManager(f.fieldManager); err != nil {
		return err
	}
	if f.namespace != "" {
		if errs := validation.IsDNS1123Label(f.namespace); len(errs) > 0 {
			return fmt.Errorf("--record-namespace: %q is not a namespace name: %s", f.namespace, strings.Join(errs, "; "))
		}
	}
	return nil
}

// recordNamespace is the record's namespace.
func (f *recordFlags) recordNamespace() string {
	if f.namespace != "" {
		return f.namespace
	}
	return podNamespace()
}

// record returns the record, not read yet, of a process limited to
// namespace scope ("" for every namespace).
func (f *recordFlags) record(cfg *rest.Config, scope string) (*record.Record, error) {
	cs, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, err
	}
	return record.New(cs.CoreV1(), f.recordNamespace(), f.fieldManager, scope), nil
}

// load returns the record of a process limited to namespace scope, read.
func (f *recordFlags) load(ctx context.Context, cfg *rest.Config, scope string) (*record.Record, error) {
	rec, err := f.record(cfg, scope)
	if err != nil {
		return nil, err
	}
	if err := rec.Load(ctx); err != nil {
		return nil, err
	}
	return rec, nil
}

// recordRuled returns next preceded by recording every resource that set
// rules. The admission policies that next puts in force first write to
// those resources as objects are created, not through the controller's
// writer; the record must list a resource before the first write to it.
func recordRuled(rec *record.Record, next policysync.ApplyFunc) policysync.ApplyFunc {
	return func(ctx context.Context, set *rules.Set) {
		for _, t := range set.SortedTargets() {
			if err := rec.Ensure(ctx, t.GVR.GroupResource()); err != nil {
				klog.FromContext(ctx).Error(err, "Cannot record a resource the admission policies write to; keys they set there may be left when no rule names it",
					"resource", rules.GVRString(t.GVR))
			}
		}
		next(ctx, set)
	}
}

// unservedPrune is a recorded resource to prune that the server does not
// serve.
type unservedPrune struct {
	resource schema.GroupResource
	err      error
}

// pruneTargets returns, for once and diff, the targets that prune the
// resources rec lists and no rule of set names, and those that resolve
// cannot resolve, which wait in the record.
func pruneTargets(rec *record.Record, set *rules.Set, resolve func(schema.GroupResource) (rules.Resource, error)) ([]*rules.Target, []unservedPrune) {
	var targets []*rules.Target
	var unserved []unservedPrune
	for _, gr := range reconcile.ToPrune(rec.Recorded(), set) {
		r, err := resolve(gr)
		if err != nil {
			unserved = append(unserved, unservedPrune{gr, err})
			continue
		}
		targets = append(targets, reconcile.Prune(r))
	}
	return targets, unserved
}
