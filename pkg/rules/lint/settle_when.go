package lint

import (
	"fmt"
	"slices"

	"github.com/kube-annotator/kube-annotator/pkg/rules/celexpr"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

// WhenReads returns the field paths the when condition of rules[i] reads,
// or nil when it has none (or it does not compile: the decoder reports that).
type WhenReads func(i int) [][]string

// parsedWhenReads compiles each rule's condition to find what it reads.
func parsedWhenReads(rules []rulefile.Rule) WhenReads {
	return func(i int) [][]string {
		if rules[i].When == "" {
			return nil
		}
		e, err := celexpr.Compile(rules[i].When, celexpr.BoolType)
		if err != nil {
			return nil // reported by the decoder
		}
		return e.Reads
	}
}

// WhenUnsettled reports the when conditions that read a label or
// annotation that their rule, or another rule on the same resource, sets:
// the controller's own write would change whether the rule selects the
// object, as with a selector on the key (see Unsettled). Unlike a
// selector's, a condition's verdict after the write cannot be known from
// the file, so any such read is refused, across rules too.
//
// group holds the indexes of the rules on one resource: by the names they
// give it (Parse), or by the resource discovery resolved those names to
// (Compile, which so also finds "deploy" and "deployments" to be one). A
// condition's read is reported once, whatever groups it is found in;
// reported records what was.
func WhenUnsettled(rules []rulefile.Rule, group []int, reads WhenReads, reported map[string]bool) []rulefile.FieldError {
	setters := metadataSetters(rules, group)
	var out []rulefile.FieldError
	for _, i := range group {
		r := &rules[i]
		p := reads(i)
		if p == nil {
			continue
		}
		labelKeys, annotationKeys := celexpr.MetadataKeys(p)
		for _, read := range slices.Concat(prefixed(rulefile.LabelKind, labelKeys), prefixed(rulefile.AnnotationKind, annotationKeys)) {
			w, ok := setters[read]
			key := fmt.Sprintf("%d %s", i, read)
			if !ok || reported[key] {
				continue
			}
			reported[key] = true
			who := "the rule sets"
			if w != i {
				who = fmt.Sprintf("rules[%d] (%s) sets", w, rules[w].Name)
			}
			out = append(out, rulefile.FieldError{
				Field: fmt.Sprintf("rules[%d].when", i),
				Message: fmt.Sprintf("%q reads %s, which %s: its write would decide whether the rule selects the object, "+
					"so the controller could undo and redo its own writes without end; %s",
					r.When, read, who, whenSettleHint),
			})
		}
	}
	return out
}

// metadataSetters returns, by kind/key, the first rule of group (its
// index) that sets each label and annotation; audit rules set none.
func metadataSetters(rules []rulefile.Rule, group []int) map[string]int {
	setters := map[string]int{}
	for _, i := range group {
		r := &rules[i]
		if r.Audit() {
			continue
		}
		for _, kind := range []string{rulefile.AnnotationKind, rulefile.LabelKind} {
			m := r.Of(kind)
			for _, keys := range []map[string]string{m.Values, m.Computed()} {
				for k := range keys {
					if _, ok := setters[kind+"/"+k]; !ok {
						setters[kind+"/"+k] = i
					}
				}
			}
		}
	}
	return setters
}

// whenSettleHint says what to write instead of a condition on a key the
// rules set.
const whenSettleHint = `leave the key out of the condition; to set it only where it is absent, give it as {value: "…", ifAbsent: true}`

// prefixed returns kind/key for each key, sorted.
func prefixed(kind string, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = kind + "/" + k
	}
	slices.Sort(out)
	return slices.Compact(out)
}
