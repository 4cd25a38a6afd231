package kubeflags

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// Reach says why a server cannot be used in one line that names it.
func TestReach(t *testing.T) {
	unauthorized := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`))
	}
	ok := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
	}
	tests := []struct {
		name      string
		handler   http.HandlerFunc
		tls       bool
		insecure  bool
		https     bool // address a plain server as https
		wantCause string
	}{
		{name: "answers", handler: ok, tls: true, insecure: true},
		{name: "untrusted certificate", handler: ok, tls: true, wantCause: "TLS: x509: certificate signed by unknown authority"},
		{name: "not TLS", handler: ok, https: true, wantCause: "TLS: the server does not answer in TLS"},
		{name: "unauthorized", handler: unauthorized, tls: true, insecure: true, wantCause: "unauthorized: the server did not accept the credentials"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var srv *httptest.Server
			if tc.tls {
				srv = httptest.NewTLSServer(tc.handler)
			} else {
				srv = httptest.NewServer(tc.handler)
			}
			defer srv.Close()
			host := srv.URL
			if tc.https {
				host = strings.Replace(host, "http://", "https://", 1)
			}
			cfg := &rest.Config{Host: host, Timeout: 5 * time.Second, TLSClientConfig: rest.TLSClientConfig{Insecure: tc.insecure}}
			cfg.GroupVersion = nil
			cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
			client, err := rest.UnversionedRESTClientFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = Reach(context.Background(), client, cfg)
			want := "API server " + host + ": " + tc.wantCause
			switch {
			case tc.wantCause == "" && err != nil:
				t.Errorf("Reach() = %v, want nil", err)
			case tc.wantCause != "" && (err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n")):
				t.Errorf("Reach() = %v, want one line starting %q", err, want)
			}
		})
	}
}
