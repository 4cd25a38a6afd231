// Package sharding measures kube-annotator split among replicas, for
// --shards: Measure runs one replica, static shards and a shard group in
// turn (shards.go), a group growing by one replica and shrinking back
// while it converges (change.go), and each setup's memory per replica
// (memory.go); Results prints the tables, the API server's sizing
// (scale.go) and whether the sharding targets were met (report.go).
//
// Layer "bench phases" of deps_test.go: it imports test/bench/rig and
// the benchmark's parts.
package sharding
