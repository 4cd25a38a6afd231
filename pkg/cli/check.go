package cli

import (
	"context"
	"fmt"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

func checkCommand(_ context.Context, e *env, args []string) int {
	fs := e.newFlagSet("check", "Validate a rules file offline: schema, annotation keys and values.")
	rulesPath := fs.String("rules", "rules.yaml", "Path to the rules file")
	if code, ok := e.parse(fs, args); !ok {
		return code
	}
	file, err := rules.Load(*rulesPath)
	if err != nil {
		fmt.Fprintln(e.Err, err)
		return 1
	}
	fmt.Fprintf(e.Out, "%s: ok (%d rules)\n", *rulesPath, len(file.Rules))
	return 0
}
