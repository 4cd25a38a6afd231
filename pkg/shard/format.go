package shard

import coordinationv1 "k8s.io/api/coordination/v1"

const (
	// FormatAnnotation on a member's Lease is the version of the format
	// of its other annotations (SyncedAnnotation). A Lease without it was
	// written by a release before formats had versions, in format 1.
	FormatAnnotation = "shard.kube-annotator.io/format"
	// Format is the version this release writes and reads.
	Format = "1"
)

// announcedSynced returns the virtual ranges a member's Lease l announces
// as synced. A Lease of a
// newer format, like one whose annotation cannot be read, announces
// nothing: the member still counts, and owns its share, but the previous
// owners of its ranges keep serving them (writing an object twice at
// worst, never leaving one out) rather than trusting an announcement they
// might misread.
func announcedSynced(l *coordinationv1.Lease) VSet {
	if f := l.Annotations[FormatAnnotation]; f != "" && f != Format {
		return VSet{}
	}
	synced, _ := ParseVSet(l.Annotations[SyncedAnnotation])
	return synced
}
