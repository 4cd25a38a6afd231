// Command image builds kube-annotator's container image without a
// container engine and without pulling a base image: per platform, one
// layer holding the static binary and a nonroot user on an empty base; the
// platforms' images in one OCI image index, written as an OCI image layout
// in a tar file (push it with `skopeo copy --all --preserve-digests
// oci-archive:…`, or load it with `podman load`). The same binaries and
// the same --created give the same bytes. deploy/Dockerfile builds the
// same image with a container engine, on distroless/static:nonroot.
//
//	image build  --binary linux/amd64=PATH --binary linux/arm64=PATH --tag kube-annotator:v1 --out dist/image.tar
//	image verify --image dist/image.tar
//	image sbom   --image dist/image.tar --bom linux/amd64=PATH.cdx.json … --out dist/image.cdx.json
//
// verify checks that each image runs as a non-root user, that its
// entrypoint is a binary for its platform, and that the host's platform's
// entrypoint runs `version`. sbom writes a CycloneDX SBOM of the image from
// the SBOMs of its binaries.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"
)

// The user the image runs as, as in distroless' nonroot images.
const (
	uid      = 65532
	execPath = "/kube-annotator"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: image build|verify|sbom [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	image := fs.String("image", "dist/kube-annotator-image.tar", "OCI layout tar file to read")
	out := fs.String("out", "dist/kube-annotator-image.tar", "file to write")
	var err error
	switch os.Args[1] {
	case "build":
		var o buildOptions
		fs.Var(&o.binaries, "binary", "PLATFORM=PATH: a static binary for linux/ARCH (repeat for each platform)")
		fs.StringVar(&o.tag, "tag", "kube-annotator:dev", "image reference recorded in the layout, REPO:TAG")
		fs.StringVar(&o.version, "version", "", "the version in the image's labels")
		fs.StringVar(&o.revision, "revision", "", "the git commit in the image's labels")
		fs.StringVar(&o.digestFile, "digest-file", "", "file to write the image index's digest to")
		created := fs.Int64("created", sourceDateEpoch(), "creation time and mtime of every file, in seconds since 1970 (default $SOURCE_DATE_EPOCH, or 0)")
		_ = fs.Parse(os.Args[2:])
		o.out, o.created = *out, time.Unix(*created, 0).UTC()
		err = build(o)
	case "verify":
		_ = fs.Parse(os.Args[2:])
		err = verify(*image)
	case "sbom":
		var boms platformFiles
		fs.Var(&boms, "bom", "PLATFORM=PATH: the CycloneDX JSON SBOM of that platform's binary (repeat for each platform)")
		repo := fs.String("repository", "", "where the image is published, for its package URL (default: the tag's repository)")
		_ = fs.Parse(os.Args[2:])
		err = writeSBOM(*image, *repo, boms, *out)
	default:
		err = fmt.Errorf("unknown command %q: want build, verify or sbom", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// sourceDateEpoch is $SOURCE_DATE_EPOCH, or 0 when it is unset.
func sourceDateEpoch() int64 {
	v := os.Getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "image: SOURCE_DATE_EPOCH=%q: want seconds since 1970\n", v)
		os.Exit(2)
	}
	return n
}
