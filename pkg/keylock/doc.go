// Package keylock answers who may change a locked rule's keys: for each
// rule marked locked, a ValidatingAdmissionPolicy and its binding that
// deny anyone but the rule's users and groups setting, changing or
// removing the keys it sets or removes, on its resources and their
// subresources — as deploy/optout-lock.yaml locks the opt-out annotation.
// `kube-annotator admission` prints them after the mutating policies.
//
// Start at Policies (keylock.go).
//
// Layer "decide" of deps_test.go: it imports rules, spec and admission, and no
// client.
package keylock
