package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// buildOptions say what build puts in the image and where it writes it.
type buildOptions struct {
	binaries   platformFiles // static linux binaries by platform
	tag        string        // reference recorded in the layout, REPO:TAG
	version    string        // org.opencontainers.image.version
	revision   string        // org.opencontainers.image.revision
	created    time.Time     // the config's created time and every mtime
	out        string        // OCI layout tar file
	digestFile string        // where the index's digest goes, if set
}

// build writes an OCI layout tar file whose index.json names one image
// index, tagged o.tag, that holds one image per platform.
func build(o buildOptions) error {
	if len(o.binaries) == 0 {
		return fmt.Errorf("--binary: want at least one PLATFORM=PATH")
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, pf := range o.binaries {
		img, err := platformImage(o, pf)
		if err != nil {
			return fmt.Errorf("%s: %w", pf.platform, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: pf.platform}})
	}
	dir, err := os.MkdirTemp("", "kube-annotator-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": o.tag})); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	if err := tarDir(dir, o.out, o.created); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	if o.digestFile != "" {
		if err := os.WriteFile(o.digestFile, []byte(digest.String()+"\n"), 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("wrote %s: %s@%s (%s)\n", o.out, o.tag, digest, o.binaries)
	return nil
}

// platformImage is the image for one platform: one layer on an empty base.
func platformImage(o buildOptions, pf platformFile) (v1.Image, error) {
	bin, err := os.ReadFile(pf.path)
	if err != nil {
		return nil, err
	}
	layerTar, err := rootfs(bin, o.created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layerTar)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	labels := map[string]string{
		"org.opencontainers.image.title":    "kube-annotator",
		"org.opencontainers.image.source":   "https://github.com/kube-annotator/kube-annotator",
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.ref.name": o.tag,
		"org.opencontainers.image.created":  o.created.Format(time.RFC3339),
	}
	if o.version != "" {
		labels["org.opencontainers.image.version"] = o.version
	}
	if o.revision != "" {
		labels["org.opencontainers.image.revision"] = o.revision
	}
	return mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: pf.platform.Architecture,
		Variant:      pf.platform.Variant,
		OS:           pf.platform.OS,
		Created:      v1.Time{Time: o.created},
		Config: v1.Config{
			User:       fmt.Sprintf("%d:%d", uid, uid),
			Entrypoint: []string{execPath},
			Cmd:        []string{"run", "--rules=/etc/kube-annotator/rules.yaml"},
			WorkingDir: "/",
			Labels:     labels,
		},
		RootFS: v1.RootFS{Type: "layers"},
	})
}

// rootfs is an image's only layer: the binary, and the passwd and group
// entries of the nonroot user, owned by root, with mtime.
func rootfs(bin []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, dir := range []string{"etc/", "home/", "home/nonroot/", "tmp/"} {
		mode := int64(0o755)
		if dir == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: mode, ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	files := []struct {
		name string
		mode int64
		data []byte
	}{
		{"etc/passwd", 0o644, []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", uid, uid))},
		{"etc/group", 0o644, []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", uid))},
		{execPath[1:], 0o755, bin},
	}
	for _, f := range files {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: mtime, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tarDir writes the files under dir into the tar file out in lexical
// order, with mtime, owned by root, with modes that do not depend on the
// umask: the same layout gives the same bytes.
func tarDir(dir, out string, mtime time.Time) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), ModTime: mtime, Format: tar.FormatPAX}
		if d.IsDir() {
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
			return tw.WriteHeader(hdr)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, int64(len(data))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// platformFile is a file for one platform, given as PLATFORM=PATH.
type platformFile struct {
	platform *v1.Platform
	path     string
}

// platformFiles is a repeatable PLATFORM=PATH flag.
type platformFiles []platformFile

func (p platformFiles) String() string {
	var s []string
	for _, pf := range p {
		s = append(s, pf.platform.String())
	}
	return strings.Join(s, ", ")
}

// Set parses linux/amd64=PATH; linux/arm64 is recorded as variant v8, as
// registries and container engines expect.
func (p *platformFiles) Set(v string) error {
	plat, path, ok := strings.Cut(v, "=")
	if !ok || path == "" {
		return fmt.Errorf("want PLATFORM=PATH, got %q", v)
	}
	pl, err := v1.ParsePlatform(plat)
	if err != nil {
		return err
	}
	if pl.OS != "linux" || pl.Architecture == "" {
		return fmt.Errorf("platform %q: want linux/ARCH", plat)
	}
	if pl.Architecture == "arm64" && pl.Variant == "" {
		pl.Variant = "v8"
	}
	for _, pf := range *p {
		if pf.platform.Equals(*pl) {
			return fmt.Errorf("platform %s given twice", pl)
		}
	}
	*p = append(*p, platformFile{pl, path})
	return nil
}
