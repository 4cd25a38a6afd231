// Package backlog bounds how many keys the controller's work queue holds
// at once. client-go's work queue keeps its maps (the dirty and
// processing sets, and its metrics' add times) at the size of the
// largest burst it ever held, for the life of the process: a first
// convergence of 300,000 objects left some 250 bytes per object in them,
// at rest. Behind the bound, the keys of a burst wait in a list of
// chunks of 1,024 keys (40 bytes per key), each freed once drained, and
// go into the queue as it drains.
//
// Start at Queue: it is the controller's work queue, with Add bounded
// and Get refilling the queue from the backlog first. The queue's depth
// metric counts the keys of the backlog too, so that it still tells how
// many objects wait.
//
// Layer "run" of deps_test.go: it imports client-go's workqueue only.
package backlog
