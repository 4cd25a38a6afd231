package harness

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/kube-annotator/kube-annotator/test/harness/promtext"
)

// Request is one series of the API server's apiserver_request_total.
type Request struct {
	Verb     string // GET, LIST, WATCH, PATCH, …
	Group    string
	Resource string
	Code     string // the response's HTTP status code, "200", "409", …
}

// Requests are request counts as the API server itself counted them.
type Requests map[Request]float64

// Sub returns r minus before, series by series.
func (r Requests) Sub(before Requests) Requests {
	out := Requests{}
	for k, v := range r {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// Count sums the series of verb; resources limits it to those resources.
func (r Requests) Count(verb string, resources ...string) int {
	total := 0.0
	for k, v := range r {
		if k.Verb != verb {
			continue
		}
		if len(resources) > 0 && !slices.Contains(resources, k.Resource) {
			continue
		}
		total += v
	}
	return int(total)
}

// WriteSeries lists the series of the write verbs (as Writes) on
// resources, or on all when none are given, e.g. "358 PATCH pods 200,
// 2 PATCH pods 409", largest first, so that a count that is off can be
// told apart by verb, resource and response code.
func (r Requests) WriteSeries(resources ...string) string {
	type series struct {
		Request
		n float64
	}
	var all []series
	for k, v := range r {
		if slices.Contains(writeVerbs, k.Verb) && (len(resources) == 0 || slices.Contains(resources, k.Resource)) {
			all = append(all, series{k, v})
		}
	}
	slices.SortFunc(all, func(a, b series) int {
		return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.Verb, b.Verb), strings.Compare(a.Resource, b.Resource), strings.Compare(a.Code, b.Code))
	})
	parts := make([]string, len(all))
	for i, s := range all {
		parts[i] = fmt.Sprintf("%.0f %s %s %s", s.n, s.Verb, s.Resource, s.Code)
	}
	return strings.Join(parts, ", ")
}

// writeVerbs are the verbs of apiserver_request_total that write.
var writeVerbs = []string{"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"}

// Writes sums the write verbs (POST, PUT, PATCH, APPLY, DELETE,
// DELETECOLLECTION) on the given resources, or on all when none are given.
func (r Requests) Writes(resources ...string) int {
	n := 0
	for _, verb := range writeVerbs {
		n += r.Count(verb, resources...)
	}
	return n
}

// APIRequests reads apiserver_request_total from the API server's /metrics.
func (e *Env) APIRequests(ctx context.Context) (Requests, error) {
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return nil, err
	}
	body, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("read /metrics: %w", err)
	}
	return parseRequests(body)
}

// parseRequests extracts apiserver_request_total from Prometheus text format.
func parseRequests(body []byte) (Requests, error) {
	const name = "apiserver_request_total{"
	out := Requests{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		if end < 0 {
			return nil, fmt.Errorf("malformed metric line %q", line)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			return nil, fmt.Errorf("malformed metric line %q: %w", line, err)
		}
		labels := promtext.Labels(line[len(name):end])
		if labels["subresource"] != "" {
			continue
		}
		out[Request{Verb: labels["verb"], Group: labels["group"], Resource: labels["resource"], Code: labels["code"]}] += v
	}
	return out, sc.Err()
}

// ServerMetric reads one metric of the API server, as
// promtext.MetricValue.
func (e *Env) ServerMetric(ctx context.Context, name string, match map[string]string) (float64, error) {
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return 0, err
	}
	body, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("read /metrics: %w", err)
	}
	return promtext.MetricValue(body, name, match), nil
}
