package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/kube-annotator/kube-annotator/pkg/app"
	"github.com/kube-annotator/kube-annotator/pkg/record"
)

// addRecordVars adds --field-manager, which names the field manager the
// commands that write (or show what they would write) act as, and
// --record-namespace, where its record of the resources written to
// (package record) is kept; they are stored in c.
func addRecordVars(fs *pflag.FlagSet, c *app.RecordConfig) {
	fieldManagerVar(fs, &c.FieldManager)
	fs.StringVar(&c.Namespace, "record-namespace", "",
		"Namespace of the ConfigMap that records the resources written to (default: the Pod's namespace in a cluster, else -n's, else \"default\")")
}

// validateFieldManager reports, naming the flag, a field manager that
// cannot be used.
func validateFieldManager(manager string) error {
	return validateRecord(app.RecordConfig{FieldManager: manager})
}

// recordNamespace is where the record of a process limited to namespace
// scope ("" for every namespace) is kept: flag (--record-namespace) when
// set; else, in a Pod, the Pod's namespace, where the rbac command grants
// it; else scope, so that a process run with -n keeps everything in that
// namespace; else "default". run, once and diff all ask it.
func recordNamespace(flag, scope string) string {
	if flag != "" {
		return flag
	}
	if ns, ok := ownNamespace(); ok {
		return ns
	}
	if scope != "" {
		return scope
	}
	return "default"
}

// loadRecord returns the record that c names, of a process limited to
// namespace scope ("" for every namespace), read. A ConfigMap of the
// record's name that is not a record is an error naming --field-manager.
func loadRecord(ctx context.Context, cfg *rest.Config, c *app.RecordConfig, scope string) (*record.Record, error) {
	rec, err := record.Open(ctx, cfg, recordNamespace(c.Namespace, scope), c.FieldManager, scope)
	if errors.Is(err, record.ErrNotRecord) {
		return nil, fmt.Errorf("--field-manager %q: %w", c.FieldManager, err)
	}
	return rec, err
}
