// Package rulestest compiles rules files for tests, against resources the
// test names instead of a cluster's discovery.
//
// Start at Compile (rulestest.go); Nodes and Pods (nodes.go, pods.go) are
// the resources that tests of fromNode serve; SetController (owners.go)
// gives an object its controller owner, for tests of owners.
//
// Layer "rules" of deps_test.go: it imports only rules and
// rules/source, and only tests import it.
package rulestest
