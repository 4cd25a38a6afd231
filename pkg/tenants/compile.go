package tenants

import (
	"context"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/lint"
	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
)

// Compiler compiles rules files as resolve.Compile does, with these
// arguments.
type Compiler struct {
	Path    string
	Resolve rules.ResolveFunc
	Schemas lint.SchemaFunc
	Exclude []string
}

// Compile compiles f.
func (c Compiler) Compile(f *spec.File) (*rules.Set, []spec.FieldError, error) {
	return resolve.Compile(c.Path, f, c.Resolve, c.Schemas, c.Exclude)
}

// Compose merges the rules in force of results into admin (Compose),
// whose set and unresolved names are compiled already, and returns the
// merged file's: admin's when no tenant rule is in force, else the set
// Compose compiled, so that each file is compiled once.
func (c Compiler) Compose(admin *spec.File, set *rules.Set, unresolved []spec.FieldError, results []Result) (*rules.Set, []spec.FieldError, error) {
	var last struct {
		file       *spec.File
		set        *rules.Set
		unresolved []spec.FieldError
	}
	merged := Compose(admin, results, func(f *spec.File) error {
		s, u, err := c.Compile(f)
		if err == nil {
			last.file, last.set, last.unresolved = f, s, u
		}
		return err
	})
	switch {
	case len(merged.Rules) == len(admin.Rules):
		return set, unresolved, nil
	case last.file == merged:
		return last.set, last.unresolved, nil
	}
	return c.Compile(merged)
}

// InCluster compiles file, the main rules file compiled already into set
// and unresolved, with the rules of the tenants' files in the cluster cfg
// reaches that its limits allow after its own, as the controller enforces
// them: for the commands that converge or compare once. A file without a
// tenants section is returned as it is.
func (c Compiler) InCluster(ctx context.Context, cfg *rest.Config, file *spec.File, set *rules.Set, unresolved []spec.FieldError) (*rules.Set, []spec.FieldError, error) {
	if file.Tenants == nil {
		return set, unresolved, nil
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	files, err := List(ctx, client, file.Tenants)
	if err != nil {
		return nil, nil, err
	}
	return c.Compose(file, set, unresolved, CheckAll(file.Tenants, files))
}
