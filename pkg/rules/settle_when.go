package rules

import (
	"fmt"
	"slices"
)

// whenUnsettled reports the when conditions that read a label or
// annotation that their rule, or another rule on the same resource, sets:
// the controller's own write would change whether the rule selects the
// object, as with a selector on the key (see unsettled). Unlike a
// selector's, a condition's verdict after the write cannot be known from
// the file, so any such read is refused, across rules too.
func whenUnsettled(rules []Rule, group resourceGroup) []FieldError {
	setters := map[string]int{} // kind/key → first rule (index) that sets it
	for _, i := range group.rules {
		r := &rules[i]
		if r.Audit() {
			continue
		}
		for _, kind := range []struct {
			name string
			keys []map[string]string
		}{
			{annotationKind, []map[string]string{r.Annotations, r.AnnotationsFrom, r.AnnotationsCEL, keysOf(r.AnnotationsFromNamespace), keysOf(r.AnnotationsFromRelated)}},
			{labelKind, []map[string]string{r.Labels, r.LabelsFrom, r.LabelsCEL, keysOf(r.LabelsFromNamespace), keysOf(r.LabelsFromRelated)}},
		} {
			for _, m := range kind.keys {
				for k := range m {
					if _, ok := setters[kind.name+"/"+k]; !ok {
						setters[kind.name+"/"+k] = i
					}
				}
			}
		}
	}
	var out []FieldError
	for _, i := range group.rules {
		r := &rules[i]
		if r.When == "" {
			continue
		}
		e, err := compileCEL(r.When, boolType)
		if err != nil {
			continue // reported by the decoder
		}
		labelKeys, annotationKeys := metadataKeys(e.reads)
		for _, read := range slices.Concat(prefixed(labelKind, labelKeys), prefixed(annotationKind, annotationKeys)) {
			w, ok := setters[read]
			if !ok {
				continue
			}
			who := "the rule sets"
			if w != i {
				who = fmt.Sprintf("rules[%d] (%s) sets", w, rules[w].Name)
			}
			out = append(out, FieldError{
				Field: fmt.Sprintf("rules[%d].when", i),
				Message: fmt.Sprintf("%q reads %s, which %s: its write would decide whether the rule selects the object, "+
					"so the controller could undo and redo its own writes without end; %s",
					r.When, read, who, whenSettleHint),
			})
		}
	}
	return out
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
