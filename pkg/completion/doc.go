// Package completion answers, for a shell's TAB, which names complete an
// argument or a flag: the resources a cluster serves, the names of their
// objects, its namespaces, as kubectl's completion does.
//
// Start at Completer (completion.go): Namespaces and Object ask the
// cluster its client configuration selects, at most Timeout long, and
// complete nothing when it does not answer in time; WithPrefix filters
// names, such as the kubeconfig's contexts, by what is typed.
//
// Layer "verb" of deps_test.go: it reads discovery and lists metadata,
// and writes nothing. It registers no flag and imports nothing of
// pkg/cli or pkg/app.
package completion
