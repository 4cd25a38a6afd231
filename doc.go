// Command kube-annotator keeps annotations and labels on Kubernetes
// objects as a rules file says. Installed as kubectl-annotator it runs as
// "kubectl annotator".
//
// This file and main.go are all there is at the top: main hands its
// arguments to cli.Main, and everything else lives under pkg/. A reader
// new to the code starts at pkg/rules (the rules file, compiled and
// evaluated), then pkg/reconcile (the one decision and write per object),
// pkg/controller (informers, queue, workers), pkg/app (the process of
// `run`) and pkg/cli (the commands).
//
// deps_test.go holds the layers those packages form, lowest first: base,
// rules, decide, run, process, command and test. A package imports only
// packages of its own layer or below, each package has a doc.go like this
// one, and none grows past 2,000 non-test lines but the few the test
// names, each with its ceiling.
package main
