package patch

import (
	"slices"
	"strings"
)

// Summary lists ch's keys for logs and events:
// "annotations a, b; labels -c" (a leading "-" is a deletion).
func (ch Change) Summary() string {
	var parts []string
	for _, kv := range []struct {
		kind string
		m    map[string]*string
	}{{"annotations", ch.Annotations}, {"labels", ch.Labels}} {
		if len(kv.m) == 0 {
			continue
		}
		keys := make([]string, 0, len(kv.m))
		for k, v := range kv.m {
			if v == nil {
				k = "-" + k
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts = append(parts, kv.kind+" "+strings.Join(keys, ", "))
	}
	return strings.Join(parts, "; ")
}
