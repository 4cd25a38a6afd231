package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kube-annotator/kube-annotator/pkg/reloader"
	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// restConfigFor parses args as a cluster command's flags and builds the
// client configuration from them. When wantErr is set, building must fail
// with an error containing it, and the configuration is nil.
func restConfigFor(t *testing.T, args []string, wantErr string) (*clusterFlags, *rest.Config) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	f := addClusterFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.restConfig()
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

// compileRules leaves out the resources the server said it does not serve,
// and fails when it could not be asked: the rules in force then stay.
func TestCompileRulesUnreachable(t *testing.T) {
	const content = "rules:\n- name: team\n  resources: [configmaps, widgets]\n  annotations: {team: a}\n"
	configMaps := rules.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true}
	refused := errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	tests := []struct {
		name            string
		widgets         error // what resolving widgets returns
		wantUnresolved  int
		wantUnreachable bool
	}{
		{name: "not served: unresolved", widgets: fmt.Errorf("widgets: %w", resolve.ErrNotServed), wantUnresolved: 1},
		{name: "could not ask: unreachable", widgets: refused, wantUnreachable: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file, err := rules.Parse("rules.yaml", []byte(content))
			if err != nil {
				t.Fatal(err)
			}
			resolveName := func(name string) (rules.Resource, error) {
				if name == "configmaps" {
					return configMaps, nil
				}
				return rules.Resource{}, tc.widgets
			}
			set, unresolved, err := compileRules("rules.yaml", file, resolveName, nil)
			if got := errors.Is(err, reloader.ErrUnreachable); got != tc.wantUnreachable {
				t.Fatalf("compileRules() error = %v, unreachable %v, want %v", err, got, tc.wantUnreachable)
			}
			if tc.wantUnreachable {
				if set != nil || !errors.Is(err, refused) {
					t.Errorf("compileRules() = %v, %v; want no set and an error wrapping %v", set, err, refused)
				}
				return
			}
			if err != nil || len(unresolved) != tc.wantUnresolved || len(set.Targets) != 1 {
				t.Errorf("compileRules() = %d targets, %d unresolved, %v; want 1, %d, nil", len(set.Targets), len(unresolved), err, tc.wantUnresolved)
			}
		})
	}
}
