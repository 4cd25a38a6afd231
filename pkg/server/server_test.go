package server

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestReadyzNotes(t *testing.T) {
	tests := []struct {
		name     string
		ready    Check
		notes    []string
		wantCode int
		wantBody string
	}{
		{"ready", func() error { return nil }, nil, http.StatusOK, "ok\n"},
		{"ready with a note", func() error { return nil }, []string{"rules reload held: x"}, http.StatusOK, "ok\nrules reload held: x\n"},
		{"not ready", func() error { return errors.New("informers not synced") }, []string{"n"}, http.StatusServiceUnavailable, "informers not synced\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(Health(tc.ready, func() []string { return tc.notes }))
			defer srv.Close()
			resp, err := http.Get(srv.URL + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantCode || string(body) != tc.wantBody {
				t.Errorf("/readyz = %d %q, want %d %q", resp.StatusCode, body, tc.wantCode, tc.wantBody)
			}
		})
	}
}
