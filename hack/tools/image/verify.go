package main

import (
	"archive/tar"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// verify checks each image of the index in the OCI layout tar file: it
// runs as a non-root user, its entrypoint is a binary for its platform, and
// where that platform is the host's, the entrypoint runs `version`.
func verify(image string) error {
	dir, err := os.MkdirTemp("", "kube-annotator-image-verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	idx, err := openIndex(image, dir)
	if err != nil {
		return err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	if len(im.Manifests) == 0 {
		return fmt.Errorf("%s: the image index holds no image", image)
	}
	for _, desc := range im.Manifests {
		if desc.Platform == nil {
			return fmt.Errorf("%s: image %s has no platform", image, desc.Digest)
		}
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return err
		}
		if err := verifyImage(img, *desc.Platform, dir); err != nil {
			return fmt.Errorf("%s: %s: %w", image, desc.Platform, err)
		}
	}
	return nil
}

// openIndex untars the OCI layout tar file image into dir and returns the
// image index its index.json names, the one `build` writes.
func openIndex(image, dir string) (v1.ImageIndex, error) {
	if err := untar(image, dir); err != nil {
		return nil, err
	}
	outer, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	om, err := outer.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(om.Manifests) != 1 || !om.Manifests[0].MediaType.IsIndex() {
		return nil, fmt.Errorf("%s: want index.json to name one image index, found %d manifests", image, len(om.Manifests))
	}
	return outer.ImageIndex(om.Manifests[0].Digest)
}

// verifyImage checks one platform's image.
func verifyImage(img v1.Image, want v1.Platform, dir string) error {
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	if cfg.OS != want.OS || cfg.Architecture != want.Architecture {
		return fmt.Errorf("config says %s/%s", cfg.OS, cfg.Architecture)
	}
	user := strings.SplitN(cfg.Config.User, ":", 2)[0]
	if n, err := strconv.Atoi(user); err != nil || n == 0 {
		return fmt.Errorf("image user %q: want a numeric non-root uid, so that runAsNonRoot can check it", cfg.Config.User)
	}
	if len(cfg.Config.Entrypoint) == 0 {
		return errors.New("image has no entrypoint")
	}
	entry := filepath.Join(dir, "entrypoint-"+want.Architecture)
	if err := extract(img, cfg.Config.Entrypoint[0], entry); err != nil {
		return err
	}
	if err := checkMachine(entry, want.Architecture); err != nil {
		return err
	}
	if want.OS != runtime.GOOS || want.Architecture != runtime.GOARCH {
		fmt.Printf("%s: user %s, entrypoint %v, a %s binary (not run on %s/%s)\n", want, cfg.Config.User, cfg.Config.Entrypoint, want.Architecture, runtime.GOOS, runtime.GOARCH)
		return nil
	}
	out, err := exec.Command(entry, append(cfg.Config.Entrypoint[1:], "version")...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("entrypoint %v version: %v: %s", cfg.Config.Entrypoint, err, out)
	}
	if !strings.HasPrefix(string(out), "kube-annotator ") {
		return fmt.Errorf("entrypoint %v version printed %q", cfg.Config.Entrypoint, out)
	}
	fmt.Printf("%s: user %s, entrypoint %v: %s", want, cfg.Config.User, cfg.Config.Entrypoint, out)
	return nil
}

// checkMachine checks that the ELF file path is for the Go architecture
// arch.
func checkMachine(path, arch string) error {
	machines := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	want, ok := machines[arch]
	if !ok {
		return fmt.Errorf("architecture %s: want amd64 or arm64", arch)
	}
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("entrypoint: %w", err)
	}
	defer f.Close()
	if f.Machine != want {
		return fmt.Errorf("entrypoint is a binary for %s, want %s", f.Machine, want)
	}
	return nil
}

// extract writes the file at path in img's layers (the last layer that
// has it wins) to dst, executable.
func extract(img v1.Image, path, dst string) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	want := strings.TrimPrefix(path, "/")
	found := false
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return err
		}
		tr := tar.NewReader(rc)
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rc.Close()
				return err
			}
			if strings.TrimPrefix(hdr.Name, "./") != want {
				continue
			}
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
			if err != nil {
				rc.Close()
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				rc.Close()
				return err
			}
			found = true
		}
		rc.Close()
	}
	if !found {
		return fmt.Errorf("entrypoint %s is not in the image", path)
	}
	return nil
}

// untar extracts the tar file src into dir.
func untar(src, dir string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if !strings.HasPrefix(target, filepath.Clean(dir)+string(os.PathSeparator)) {
			return fmt.Errorf("%s: entry %q leaves the directory", src, hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.Create(target)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, tr); err != nil {
				out.Close()
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
		}
	}
}
