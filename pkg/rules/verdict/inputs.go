package verdict

import (
	"cmp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// CELInputs returns the fields e reads of obj, of its namespace (obj
// itself when isNamespace) and of its owner, as look finds them, each
// once, sorted; none when they cannot be read.
func CELInputs(e *celexpr.Expr, obj metav1.Object, isNamespace bool, look source.Lookup) []Input {
	vars, err := celexpr.Input(obj, isNamespace, look, e)
	if err != nil {
		return nil
	}
	var out []Input
	add := func(root string, content map[string]any, paths [][]string) {
		for _, p := range paths {
			if len(p) == 0 || content == nil {
				continue // the whole object: no one field to show
			}
			out = append(out, Input{Field: FieldName(root, p), Value: ValueAt(content, p)})
		}
	}
	add(celexpr.Object, vars.Object, e.Reads)
	add(celexpr.NamespaceObject, vars.Namespace, e.NamespaceReads)
	add(celexpr.OwnerObject, vars.Owner, e.OwnerReads)
	slices.SortFunc(out, func(a, b Input) int { return cmp.Compare(a.Field, b.Field) })
	return slices.CompactFunc(out, func(a, b Input) bool { return a.Field == b.Field })
}
