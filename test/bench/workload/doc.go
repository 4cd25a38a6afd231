// Package workload is what the benchmark annotates: the four Resources
// (Deployments, ReplicaSets, Pods and Frigates, nothing running their
// controllers), the objects seeded into them (SeedRef, ObjectRef) in two
// shapes (Small, Realistic), the annotation every runner sets
// (AnnotationKey, SetPatch), and the benchmark's own requests over them
// (EachObject, ForEach).
//
// Layer "bench parts" of deps_test.go: of the module, it imports
// test/harness for the resources' names.
package workload
