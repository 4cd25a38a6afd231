package spec

// MaxRules bounds the rules of a file. Loading compares every pair of
// rules (for conflicts, and for writes that flip selectors), which grows
// with the square of their number: 3,500 rules take about 15 s on two
// cores.
const MaxRules = 3_500

// KeysOf returns m's keys, as a map to empty values.
func KeysOf[V any](m map[string]V) map[string]string {
	out := make(map[string]string, len(m))
	for k := range m {
		out[k] = ""
	}
	return out
}
