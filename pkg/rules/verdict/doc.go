// Package verdict is what explain says of one object, rule by rule: a
// Verdict per rule, whether it selects the object and why, its when
// Condition with the Inputs it read, and the keys it Wants. Package rules
// computes them (Target.Explain); the explain command prints them.
package verdict
