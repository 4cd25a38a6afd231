// Command render renders a kustomization, deploy/, into one manifest with
// the image it runs set to a reference, without a kustomize binary: it
// builds the kustomization with the kustomize API (as `kubectl kustomize`
// does) under an overlay that sets the image.
//
//	render --dir deploy --image REGISTRY/kube-annotator:v1.2.3@sha256:… --out dist/install.yaml
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	dir := flag.String("dir", "deploy", "the kustomization to render")
	image := flag.String("image", "", "REPOSITORY[:TAG][@DIGEST] the kustomization's image kube-annotator becomes")
	out := flag.String("out", "dist/install.yaml", "file to write the manifest to")
	header := flag.String("header", "", "comment lines written before the manifest (without the leading #)")
	flag.Parse()
	if err := run(*dir, *image, *out, *header); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func run(dir, image, out, header string) error {
	ref, err := parseImage(image)
	if err != nil {
		return fmt.Errorf("--image: %w", err)
	}
	manifest, err := render(dir, "kube-annotator", ref)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, append(comment(header), manifest...), 0o644)
}
