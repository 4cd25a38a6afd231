package spec

import (
	"strings"
)

// Line returns the line of the field at path, as errors name it
// ("rules[2].labels.team"), for the checks made after decoding; 0 when
// it is not known.
func (f *File) Line(path string) int {
	for path != "" {
		if l, ok := f.lines[path]; ok {
			return l
		}
		path = path[:max(strings.LastIndexAny(path, ".["), 0)] // the field or item that holds it
	}
	return 0
}

// SetLines records where the decoder found the fields of f, by path, for
// Line.
func (f *File) SetLines(lines map[string]int) { f.lines = lines }

// Put sets m[k] to v, making m when nil, and returns m: one step of
// building a map that stays nil while empty.
func Put[K comparable, V any](m map[K]V, k K, v V) map[K]V {
	if m == nil {
		m = map[K]V{}
	}
	m[k] = v
	return m
}
