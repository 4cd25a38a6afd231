package rules

import (
	"cmp"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
	"github.com/kube-annotator/kube-annotator/pkg/rules/verdict"
)

// Explain returns, for every rule of t in file order, whether it selects
// obj and, if not, why; and, if so, what it wants of obj. Like Evaluate,
// it only reads obj.
func (t *Target) Explain(obj metav1.Object, namespaces source.Lookup) []verdict.Verdict {
	excluded, ns := t.excludedBy(obj)
	h := home{look: namespaces, isNamespace: t.isNamespaces()}
	if t.ReadsNamespaces {
		h.obj, h.why = t.home(obj, namespaces)
	}
	out := make([]verdict.Verdict, 0, len(t.Rules))
	for _, r := range t.Rules {
		v := verdict.Verdict{Rule: r.Name, Index: r.Index, Mode: r.EffectiveMode()}
		switch {
		case excluded != "":
			v.Reason = fmt.Sprintf("the namespaces excluded from every rule (%q) leave out namespace %q", excluded, ns)
			v.Excluded = &verdict.Exclusion{Glob: excluded, Namespace: ns}
		default:
			v.Reason = r.Unselected(obj, t.isNamespaces(), namespaces)
		}
		v.Selects = v.Reason == ""
		if excluded == "" && r.sel.UnselectedBy(obj, t.isNamespaces(), namespaces) == "" {
			v.When = r.condition(obj, h, v.Selects)
		}
		if v.Selects {
			w := r.alone(obj, h)
			v.Wants, v.Problems = wants(w), w.Problems
			for i, want := range v.Wants {
				if want.Value != nil {
					v.Wants[i].From, v.Wants[i].Inputs = r.source(want.Kind, want.Key, obj, h)
				}
			}
		}
		out = append(out, v)
	}
	return out
}

// wants lists what e wants, annotations before labels, each sorted by key.
func wants(e *Evaluation) []verdict.Want {
	var out []verdict.Want
	for _, kind := range []struct {
		name     string
		set      map[string]string
		ifAbsent map[string]bool
		remove   []string
	}{
		{rulefile.AnnotationKind, e.Desired.Annotations, e.Desired.IfAbsentAnnotations, e.Desired.RemoveAnnotations},
		{rulefile.LabelKind, e.Desired.Labels, e.Desired.IfAbsentLabels, e.Desired.RemoveLabels},
	} {
		var ws []verdict.Want
		for k, v := range kind.set {
			ws = append(ws, verdict.Want{Kind: kind.name, Key: k, Value: &v, IfAbsent: kind.ifAbsent[k], Once: e.once[keyOf{kind.name, k}] != "", Defaulted: e.Defaulted(kind.name, k),
				MadeValid: e.madeValid[keyOf{kind.name, k}], Input: e.Input(kind.name, k)})
		}
		for _, k := range kind.remove {
			ws = append(ws, verdict.Want{Kind: kind.name, Key: k})
		}
		slices.SortFunc(ws, func(a, b verdict.Want) int { return cmp.Compare(a.Key, b.Key) })
		out = append(out, ws...)
	}
	return out
}
