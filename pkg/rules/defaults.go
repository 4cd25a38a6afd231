package rules

// missing is a computed value that could not be read — its source lacks
// it, or holds no valid value — and why.
type missing struct {
	key, why string
}

// orDefault returns values, the computed values of keys of kind that rule
// read, with the rule's default set for each key of miss that has one
// (recorded, with why, for explanations). Keys of miss without a default
// stay unset and are reported in e.Problems. Every computed value form
// reads through it, so each takes a default the same way.
func (e *Evaluation) orDefault(values map[string]string, miss []missing, defaults map[string]string, rule, kind string) map[string]string {
	for _, m := range miss {
		d, ok := defaults[m.key]
		if !ok {
			e.Problems = append(e.Problems, rule+": "+m.key+": "+m.why)
			continue
		}
		values = put(values, m.key, d)
		if _, taken := e.setBy[keyOf{kind, m.key}]; !taken {
			e.defaulted = put(e.defaulted, keyOf{kind, m.key}, m.why)
		}
	}
	return values
}

// Defaulted returns why the default of the key of kind ("annotation" or
// "label") is set on the object, or "" when its value was read.
func (e *Evaluation) Defaulted(kind, key string) string { return e.defaulted[keyOf{kind, key}] }
