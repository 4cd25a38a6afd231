// Command demo shows kube-annotator at work on a throwaway control plane on
// 127.0.0.1, with no cluster, container runtime or network needed. It is
// what `make demo` runs.
//
// It starts etcd, kube-apiserver (with the Frigate CRD) and
// kube-controller-manager from the binaries `make envtest-assets` builds,
// creates namespace "demo" with frigate-sample and a 2-replica Deployment
// "web", starts the kube-annotator binary with the rules file, waits until
// the Deployment, its ReplicaSet, its Pods and the Frigate all carry
// sample-controller: "True", prints them with kubectl, and keeps the
// cluster running for you to explore until Ctrl-C. Then it stops every
// process it started, by PID, and removes its files.
//
// Usage, from the repository root:
//
//	go build -o bin/kube-annotator .
//	go run ./test/demo --binary bin/kube-annotator --rules rules.yaml
//
// With --exit-after-ready it stops as soon as everything is annotated and
// exits 0 only if it was, for automated checks.
package main
