package cli

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
)

// restConfigFor parses args as a cluster command's flags, validates them
// and builds the client configuration from them. When wantErr is set, building must fail
// with an error containing it, and the configuration is nil.
func restConfigFor(t *testing.T, args []string, wantErr string) (*clusterFlags, *rest.Config) {
	t.Helper()
	c := &cobra.Command{Use: "test"}
	f := addClusterFlags(c, terminalRequestTimeout)
	fs := c.Flags()
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	var cfg *rest.Config
	err := f.validate()
	if err == nil {
		cfg, err = f.restConfig()
	}
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("restConfig() error = %v, want one containing %q", err, wantErr)
		}
		return f, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return f, cfg
}

func TestRestConfigRateLimits(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantQPS   float32
		wantBurst int
		wantErr   string
	}{
		{name: "default: no client-side limit", wantQPS: -1, wantBurst: 400},
		{name: "a limit", args: []string{"--kube-api-qps", "50", "--kube-api-burst", "100"}, wantQPS: 50, wantBurst: 100},
		{name: "zero would mean client-go's 5", args: []string{"--kube-api-qps", "0"}, wantErr: "--kube-api-qps must not be 0"},
		{name: "burst below 1", args: []string{"--kube-api-qps", "5", "--kube-api-burst", "0"}, wantErr: "--kube-api-burst must be at least 1"},
		{name: "burst unused without a limit", args: []string{"--kube-api-burst", "0"}, wantQPS: -1, wantBurst: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, cfg := restConfigFor(t, append([]string{"--server", "https://127.0.0.1:6443"}, tc.args...), tc.wantErr)
			if cfg == nil {
				return
			}
			if cfg.QPS != tc.wantQPS || cfg.Burst != tc.wantBurst {
				t.Errorf("QPS, Burst = %v, %d; want %v, %d", cfg.QPS, cfg.Burst, tc.wantQPS, tc.wantBurst)
			}
		})
	}
}
