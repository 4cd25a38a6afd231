// Package kubelet gives a process what the kubelet gives a Pod's
// container, for tests that run kube-annotator as it runs in a cluster:
// a PodIdentity (pod.go: a service account's token, the cluster's CA and
// the namespace, mounted in ServiceAccountDir inside a private mount
// namespace by PodIdentity.Command) and a ConfigMapVolume (volume.go: a
// directory laid out and updated as the kubelet updates a ConfigMap
// volume, by one rename of "..data").
//
// Layer "test support" of deps_test.go, below test/harness: it imports nothing
// of the module.
package kubelet
