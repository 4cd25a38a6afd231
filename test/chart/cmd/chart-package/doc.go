// Command chart-package packages deploy/chart/kube-annotator as `helm
// package` does, reproducibly: every file in the archive is dated --mtime,
// so the same sources and version give the same bytes (make chart-package).
// Given --image-digest (make release), the packaged values pull
// --image-repo by that digest.
package main
