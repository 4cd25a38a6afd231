package main

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// verify checks the image in the OCI layout tar file: it runs as a
// non-root user, and its entrypoint runs `version`.
func verify(image string) error {
	dir, err := os.MkdirTemp("", "kube-annotator-image-verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := untar(image, dir); err != nil {
		return err
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	if len(im.Manifests) != 1 {
		return fmt.Errorf("%s: want one image, found %d", image, len(im.Manifests))
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	user := strings.SplitN(cfg.Config.User, ":", 2)[0]
	if n, err := strconv.Atoi(user); err != nil || n == 0 {
		return fmt.Errorf("image user %q: want a numeric non-root uid, so that runAsNonRoot can check it", cfg.Config.User)
	}
	if len(cfg.Config.Entrypoint) == 0 {
		return errors.New("image has no entrypoint")
	}
	entry := filepath.Join(dir, "entrypoint")
	if err := extract(img, cfg.Config.Entrypoint[0], entry); err != nil {
		return err
	}
	out, err := exec.Command(entry, append(cfg.Config.Entrypoint[1:], "version")...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("entrypoint %v version: %v: %s", cfg.Config.Entrypoint, err, out)
	}
	if !strings.HasPrefix(string(out), "kube-annotator ") {
		return fmt.Errorf("entrypoint %v version printed %q", cfg.Config.Entrypoint, out)
	}
	fmt.Printf("%s: user %s, entrypoint %v: %s", image, cfg.Config.User, cfg.Config.Entrypoint, out)
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
