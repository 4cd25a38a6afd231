// Package reconcile decides what one object's annotations and labels must
// become under the rules, and makes that change: the one place where the
// decision and the write are made. The controller (run) and the one-shot
// commands (once, diff, explain, prune) all go through it, so they cannot
// disagree about what an object needs.
//
// Start at Decide (reconcile.go): it evaluates the rules.Target for the
// object, with the source.Lookup it is given, and plans the change with
// package patch. Writer.Send (send.go) writes it, as the field manager;
// Explain (explain.go) says why; Coverage (coverage.go) gives the state
// of each key the rules set, as the coverage gauge and command count it;
// Prune and ToPrune (prune.go) remove keys
// no rule wants on resources no rule names.
//
// It owns the ownership invariant: the keys this program may delete are
// those its field manager owns in the object's managedFields, and every
// write is sent as that same field manager. Keys its admission policies
// set are listed in the marker annotation patch.MarkerKey(manager,
// resource) and count as owned too, so that an object annotated at
// admission needs no write while the rules still want what it carries.
//
// Layer "decide" of deps_test.go: it imports rules and patch, and of
// client-go only the metadata client it writes through; no informer.
package reconcile
