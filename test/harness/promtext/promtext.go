package promtext

import (
	"strconv"
	"strings"
)

// Labels parses `a="x",b="y"`; the label values read here hold no quotes
// or commas.
func Labels(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

// MetricValue sums the samples of metric name in Prometheus text format
// whose labels include match.
func MetricValue(body []byte, name string, match map[string]string) float64 {
	total := 0.0
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		labels := map[string]string{}
		switch {
		case strings.HasPrefix(rest, "{"):
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				continue
			}
			labels = Labels(rest[1:end])
			rest = rest[end+1:]
		case strings.HasPrefix(rest, " "):
		default:
			continue // another metric whose name starts with name
		}
		ok := true
		for k, v := range match {
			ok = ok && labels[k] == v
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64); ok && err == nil {
			total += v
		}
	}
	return total
}
