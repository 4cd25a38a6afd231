package harness

import "testing"

func TestParseRequests(t *testing.T) {
	body := []byte(`# HELP apiserver_request_total Counter of apiserver requests.
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="PATCH",version="v1"} 358
apiserver_request_total{code="409",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="PATCH",version="v1"} 2
apiserver_request_total{code="201",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="APPLY",version="v1"} 5
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="status",verb="PATCH",version="v1"} 7
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 3
`)
	r, err := parseRequests(body)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		got  any
		want any
	}{
		{"PATCH on pods, every code, no subresource", r.Count("PATCH", "pods"), 360},
		{"writes on every resource", r.Writes(), 365},
		{"writes on pods", r.Writes("pods"), 360},
		{"LIST", r.Count("LIST"), 3},
		{"series by verb, resource and code", r.WriteSeries(), "358 PATCH pods 200, 5 APPLY deployments 201, 2 PATCH pods 409"},
		{"series on deployments", r.WriteSeries("deployments"), "5 APPLY deployments 201"},
		{"less an earlier count", r.Sub(Requests{{Verb: "PATCH", Resource: "pods", Code: "200"}: 350}).WriteSeries(), "8 PATCH pods 200, 5 APPLY deployments 201, 2 PATCH pods 409"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
}
