package app

import (
	"context"

	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2"

	"github.com/kube-annotator/kube-annotator/pkg/reports"
)

// reportsLoop returns what runs while this replica leads: with reports
// on, the writer of store's reports, which waits for synced; off, the
// deletion of the reports the field manager wrote before.
func reportsLoop(cfg Config, client dynamic.Interface, store *reports.Store, synced func() bool) func(context.Context) {
	if !cfg.Reports.Enabled {
		return func(ctx context.Context) {
			ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithName("reports"))
			if err := reports.Cleanup(ctx, client, cfg.Record.FieldManager); err != nil {
				klog.FromContext(ctx).Info("Could not delete the reports written before", "err", err)
			}
		}
	}
	w := reports.NewWriter(client, store, reports.Options{
		FieldManager: cfg.Record.FieldManager,
		Name:         cfg.reportName(),
		Interval:     cfg.Reports.Interval,
		MaxResults:   cfg.Reports.MaxResults,
		Synced:       synced,
	})
	return func(ctx context.Context) {
		w.Run(klog.NewContext(ctx, klog.FromContext(ctx).WithName("reports")))
	}
}
