package patch

import "strings"

// The version of a marker's format. A marker's value names its version in
// an entry MarkerFormatPrefix+version, which no key can be, since no key
// contains a colon and the only other entries with one start with
// MarkerLabel. A value without it is of format 1.
//
// Format 1 is written without the entry: it is the format of the releases
// before formats had versions, byte for byte, so that replicas and
// admission policies of both, side by side during an upgrade, never
// rewrite each other's markers.
const (
	MarkerFormatPrefix = "format:"
	MarkerFormat       = "1"
)

// MarkerReadable reports whether this release reads a marker's value: it
// names no format, or format 1. A marker of a newer format is left alone:
// the keys it lists do not count as owned (so none is deleted on its
// word), and it is neither rewritten nor deleted.
func MarkerReadable(value string) bool {
	for entry := range strings.SplitSeq(value, ",") {
		entry = strings.TrimSpace(entry)
		if v, ok := strings.CutPrefix(entry, MarkerFormatPrefix); ok && v != MarkerFormat {
			return false
		}
	}
	return true
}
