// Package chart loads, renders and packages the Helm chart in
// deploy/chart/kube-annotator with Helm's own library, for its tests and
// for `make chart-package`. It is a module of its own so that Helm stays
// out of kube-annotator's dependencies.
package chart
