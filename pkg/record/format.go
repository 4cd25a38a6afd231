package record

import "fmt"

// The version of the record's format.
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
