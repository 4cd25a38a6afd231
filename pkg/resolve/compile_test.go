package resolve

import (
	"errors"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// Compile leaves out the resources the server said it does not serve, and
// fails when it could not be asked: the rules in force then stay.
func TestCompileUnreachable(t *testing.T) {
	const content = "rules:\n- name: team\n  resources: [configmaps, widgets]\n  annotations: {team: a}\n"
	configMaps := source.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Namespaced: true}
	refused := errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	tests := []struct {
		name            string
		widgets         error // what resolving widgets returns
		exclude         []string
		wantUnresolved  int
		wantUnreachable bool
		wantErr         string
	}{
		{name: "not served: unresolved", widgets: fmt.Errorf("widgets: %w", ErrNotServed), wantUnresolved: 1},
		{name: "could not ask: unreachable", widgets: refused, wantUnreachable: true},
		{name: "a bad glob", widgets: &notServedError{name: "widgets"}, exclude: []string{"["},
			wantErr: `excluded namespaces: invalid namespace glob "["`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file, err := rules.Parse("rules.yaml", []byte(content))
			if err != nil {
				t.Fatal(err)
			}
			resolveName := func(name string) (source.Resource, error) {
				if name == "configmaps" {
					return configMaps, nil
				}
				return source.Resource{}, tc.widgets
			}
			set, unresolved, err := Compile("rules.yaml", file, resolveName, nil, tc.exclude)
			if got := errors.Is(err, ErrUnreachable); got != tc.wantUnreachable {
				t.Fatalf("Compile() error = %v, unreachable %v, want %v", err, got, tc.wantUnreachable)
			}
			switch {
			case tc.wantUnreachable:
				if set != nil || !errors.Is(err, refused) {
					t.Errorf("Compile() = %v, %v; want no set and an error wrapping %v", set, err, refused)
				}
			case tc.wantErr != "":
				if err == nil || len(err.Error()) < len(tc.wantErr) || err.Error()[:len(tc.wantErr)] != tc.wantErr {
					t.Errorf("Compile() error = %v, want %q…", err, tc.wantErr)
				}
			case err != nil || len(unresolved) != tc.wantUnresolved || len(set.Targets) != 1:
				t.Errorf("Compile() = %v, %d unresolved, %v; want 1 target, %d, nil", set, len(unresolved), err, tc.wantUnresolved)
			}
		})
	}
}
