// Command image builds kube-annotator's container image without a
// container engine and without pulling a base image: one layer holding the
// static binary and a nonroot user on an empty base, written as an OCI
// image layout in a tar file (load it with `podman load`, `skopeo copy
// oci-archive:…`, or `crane push`). deploy/Dockerfile builds the same image
// with a container engine, on distroless/static:nonroot.
//
//	image build  --binary bin/linux_amd64/kube-annotator --tag kube-annotator:v1 --out dist/image.tar
//	image verify --image dist/image.tar
//
// verify checks that the image runs as a non-root user and that its
// entrypoint, extracted from the layer, runs `version`.
package main

import (
	"flag"
	"fmt"
	"os"
)

// The user the image runs as, as in distroless' nonroot images.
const (
	uid      = 65532
	execPath = "/kube-annotator"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: image build|verify [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	var err error
	switch os.Args[1] {
	case "build":
		binary := fs.String("binary", "", "static linux binary to put in the image")
		tag := fs.String("tag", "kube-annotator:dev", "image reference recorded in the layout")
		arch := fs.String("arch", "amd64", "architecture of the binary")
		out := fs.String("out", "dist/kube-annotator-image.tar", "OCI layout tar file to write")
		_ = fs.Parse(os.Args[2:])
		err = build(*binary, *tag, *arch, *out)
	case "verify":
		image := fs.String("image", "dist/kube-annotator-image.tar", "OCI layout tar file to check")
		_ = fs.Parse(os.Args[2:])
		err = verify(*image)
	default:
		err = fmt.Errorf("unknown command %q: want build or verify", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}
