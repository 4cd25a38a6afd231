// Package shard splits the objects of a cluster among replicas of the
// controller. An object belongs to the replica whose ranges hold the
// FNV-1a 64 hash of its metadata.uid, the hash of the API server's shard
// selectors (KEP-5866, k8s.io/apimachinery/pkg/sharding). A replica sends
// its ranges to the API server as a shard selector; when the server does
// not apply it (the ShardedListAndWatch feature is off), the replica drops
// the objects of other ranges itself, with the same hash.
//
// Start at Ranges and Static (ranges.go), a replica's share of the hash
// space, and New (shard.go), the Shard that filters an informer's lists
// and watches (listwatch.go). A shard group (--shard-group) finds its
// members through Leases (Group, group.go), shares virtual ranges among
// them (Assign, assign.go) and hands them over as members come and go
// (Dynamic, dynamic.go).
//
// Layer "base" of deps_test.go: it imports no other package of this
// module; only pkg/app imports it.
package shard
