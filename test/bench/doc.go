// Command bench measures kube-annotator against two baselines on a real
// control plane (etcd + kube-apiserver on 127.0.0.1, started by
// test/harness). It is what `make bench`, `make bench-targets` and `make
// bench-scale` run, and docs/performance.md reports its figures; after
// the rounds it judges kube-annotator's runs on the page's targets.
//
// It seeds --objects objects, then runs each runner in turn — a raw PATCH
// loop through the dynamic and the metadata client, with and without a
// watch; test/bench/crrunner, the controller a Kubebuilder user would
// write; and the kube-annotator binary (--binary) — and compares the time
// to converge, the API server's requests, CPU and memory, the latency at
// creation with and without admission policies and, with --shards N,
// replicas, static shards and a shard group. The comment on main says what
// each measurement is, exactly.
//
// Start at main (main.go) and the phases in order (bench.go). Each
// measurement is a package: rounds (the runners against each other),
// memory (kube-annotator at rest), policy (annotating at creation),
// sharding and owners (values read from owners, --owners), over rig (the control plane, clients and runners every one
// stands on) and tracker (the benchmark's own watch, which says when
// every object is annotated); raw is the raw runner, run as `bench raw`.
//
// Usage, from the repository root:
//
//	make build   # or: CGO_ENABLED=0 go build -trimpath -o bin/kube-annotator .
//	go run ./test/bench --binary bin/kube-annotator
//	go run ./test/bench --binary bin/kube-annotator --objects 400 --rounds 1 --steady 5s --latency 20   # ~2 min smoke run
//	go run ./test/bench --binary bin/kube-annotator --shards 3   # 1 replica vs 3 shards, static and as a group
//	go run ./test/bench --binary bin/kube-annotator --owners 5000   # relabel one Deployment of 5,000 Pods (~6 min)
//
// Layer "test" of deps_test.go: it imports its packages under
// test/bench and test/harness, and no product package imports it.
package main
