// Package raw is the raw runner: the least a program can do to annotate
// every object, as a floor to compare the controllers with — one
// paginated list of each resource and a merge patch per object lacking
// the annotation, no cache, no queue. Main runs it; test/bench runs Main
// when started as `bench raw` (Command), which is how the benchmark
// starts it as a child process.
//
// With --metadata it lists and patches through the metadata client, with
// --watch it also watches the resources, as a controller receives the
// echo of its own writes. With --label KEY=VALUE it relabels instead the
// Pods of --namespace that --selector selects, listed and patched through
// the metadata client: the floor for relabelling one workload's Pods.
//
// Layer "bench parts" of deps_test.go: of the module, it imports
// test/bench/workload and test/bench/progress.
package raw
