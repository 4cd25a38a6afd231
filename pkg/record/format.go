package record

import "fmt"

// The record is a ConfigMap named after the field manager (see Name),
// labelled app.kubernetes.io/managed-by=kube-annotator and opted out of
// every rule (rulefile.IgnoreAnnotation):
//
//	data:
//	  format: "1"
//	  fieldManager: kube-annotator
//	  resources: |
//	    deployments.apps
//	    pods
//	    configmaps -n team-a
//
// One line per resource and scope. A resource is written as its
// group-resource ("resource.group", "resource" for the core group); the
// version is resolved through discovery when the resource is pruned, so
// that a CRD that changed its served versions is still found. A line
// without "-n" was written by a process that watched every namespace; one
// with "-n NS" by a process limited to namespace NS (run -n NS). Each
// process prunes the lines of its scope: a process limited to NS those
// with "-n NS"; one that watches every namespace all of them.
//
// The format key holds the version of this format (see Format); a record
// without it is of format 1, and one of a newer format is refused.
//
// The version of the record's format:
const (
	// FormatKey holds the version of the format of the record's other
	// keys. A record without it was written by a release before formats
	// had versions, in format 1.
	FormatKey = "format"
	// Format is the version this release reads and writes. A record is
	// stamped with it at its next write; reading does not write.
	Format = "1"
)

// checkFormat reports why a record whose FormatKey is version cannot be
// read: it is of a format newer than Format. A version-less record is of
// format 1.
func checkFormat(version string) error {
	if version == "" || version == Format {
		return nil
	}
	return fmt.Errorf("data.%s is %q: written by a newer kube-annotator, and this one reads format %s only; "+
		"refusing to misread it: run a release that reads format %s", FormatKey, version, Format, version)
}
