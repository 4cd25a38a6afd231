package main

import (
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// writeSBOM writes a CycloneDX SBOM of the image index in the OCI layout
// tar file image: the index is the BOM's subject, each platform's image a
// component holding that platform's binary, and the binaries' Go modules
// (from boms, the binaries' own SBOMs) components they depend on.
func writeSBOM(image, repository string, boms platformFiles, out string) error {
	dir, err := os.MkdirTemp("", "kube-annotator-image-sbom-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := untar(image, dir); err != nil {
		return err
	}
	outer, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return err
	}
	om, err := outer.IndexManifest()
	if err != nil {
		return err
	}
	if len(om.Manifests) != 1 {
		return fmt.Errorf("%s: want index.json to name one image index, found %d manifests", image, len(om.Manifests))
	}
	top := om.Manifests[0]
	repo, tag := splitTag(top.Annotations["org.opencontainers.image.ref.name"])
	if repository != "" {
		repo = repository
	}
	idx, err := outer.ImageIndex(top.Digest)
	if err != nil {
		return err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	b := newImageBOM(repo, tag, top.Digest)
	for _, desc := range im.Manifests {
		bomFile, ok := boms.find(desc.Platform)
		if !ok {
			return fmt.Errorf("--bom: no SBOM given for the image's platform %s", desc.Platform)
		}
		bin, err := readBOM(bomFile)
		if err != nil {
			return err
		}
		if err := b.addPlatform(desc, bin); err != nil {
			return fmt.Errorf("%s: %w", bomFile, err)
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := cdx.NewBOMEncoder(f, cdx.BOMFileFormatJSON).SetPretty(true).Encode(b.bom); err != nil {
		return err
	}
	return f.Close()
}

// imageBOM is the SBOM of an image index under construction.
type imageBOM struct {
	bom        *cdx.BOM
	repo, tag  string
	components map[string]cdx.Component // by bom-ref
	deps       map[string][]string      // bom-ref → what it depends on
}

func newImageBOM(repo, tag string, digest v1.Hash) *imageBOM {
	b := &imageBOM{bom: cdx.NewBOM(), repo: repo, tag: tag, components: map[string]cdx.Component{}, deps: map[string][]string{}}
	b.bom.SerialNumber = ""
	ref := ociPURL(repo, tag, digest, nil)
	b.bom.Metadata = &cdx.Metadata{Component: &cdx.Component{
		BOMRef: ref, Type: cdx.ComponentTypeContainer, Name: lastElem(repo), Version: tag, PackageURL: ref,
		Hashes: &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: digest.Hex}},
	}}
	return b
}

// addPlatform adds the image desc and the binary bin's SBOM describes.
func (b *imageBOM) addPlatform(desc v1.Descriptor, bin *cdx.BOM) error {
	if bin.Metadata == nil || bin.Metadata.Component == nil {
		return fmt.Errorf("the SBOM names no binary in metadata.component")
	}
	imgRef := ociPURL(b.repo, b.tag, desc.Digest, desc.Platform)
	app := *bin.Metadata.Component
	appRef := app.BOMRef + "#" + desc.Platform.String()
	app.BOMRef = appRef
	if bin.Metadata.Properties != nil {
		app.Properties = bin.Metadata.Properties
	}
	b.components[imgRef] = cdx.Component{
		BOMRef: imgRef, Type: cdx.ComponentTypeContainer, Name: lastElem(b.repo), Version: b.tag, PackageURL: imgRef,
		Hashes:     &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: desc.Digest.Hex}},
		Properties: &[]cdx.Property{{Name: "oci:platform", Value: desc.Platform.String()}},
	}
	b.components[appRef] = app
	b.depend(b.bom.Metadata.Component.BOMRef, imgRef)
	b.depend(imgRef, appRef)
	if bin.Components != nil {
		for _, c := range *bin.Components {
			b.components[c.BOMRef] = c
		}
	}
	if bin.Dependencies != nil {
		for _, d := range *bin.Dependencies {
			from := d.Ref
			if from == bin.Metadata.Component.BOMRef {
				from = appRef
			}
			if d.Dependencies != nil {
				b.depend(from, *d.Dependencies...)
			} else {
				b.depend(from)
			}
		}
	}
	b.bom.Components = b.sortedComponents()
	b.bom.Dependencies = b.sortedDependencies()
	return nil
}

// depend records that from depends on each of to.
func (b *imageBOM) depend(from string, to ...string) {
	for _, t := range to {
		if !slices.Contains(b.deps[from], t) {
			b.deps[from] = append(b.deps[from], t)
		}
	}
	if _, ok := b.deps[from]; !ok {
		b.deps[from] = nil
	}
}

func (b *imageBOM) sortedComponents() *[]cdx.Component {
	refs := slices.Sorted(maps.Keys(b.components))
	cs := make([]cdx.Component, 0, len(refs))
	for _, r := range refs {
		cs = append(cs, b.components[r])
	}
	return &cs
}

func (b *imageBOM) sortedDependencies() *[]cdx.Dependency {
	refs := slices.Sorted(maps.Keys(b.deps))
	ds := make([]cdx.Dependency, 0, len(refs))
	for _, r := range refs {
		to := slices.Sorted(slices.Values(b.deps[r]))
		ds = append(ds, cdx.Dependency{Ref: r, Dependencies: &to})
	}
	return &ds
}

// find returns the file given for platform p.
func (p platformFiles) find(pl *v1.Platform) (string, bool) {
	for _, pf := range p {
		if pl != nil && pf.platform.Equals(*pl) {
			return pf.path, true
		}
	}
	return "", false
}

func readBOM(path string) (*cdx.BOM, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(f, cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &bom, nil
}

// ociPURL is the package URL of an OCI artifact, as the purl spec's oci
// type says: pkg:oci/NAME@DIGEST?repository_url=…&tag=….
func ociPURL(repo, tag string, digest v1.Hash, pl *v1.Platform) string {
	q := url.Values{}
	if pl != nil {
		q.Set("arch", pl.Architecture)
		q.Set("os", pl.OS)
	}
	if strings.Contains(repo, "/") {
		q.Set("repository_url", repo)
	}
	if tag != "" {
		q.Set("tag", tag)
	}
	return "pkg:oci/" + lastElem(repo) + "@" + url.PathEscape(digest.String()) + "?" + q.Encode()
}

// splitTag splits REPO:TAG; a port in the host is not a tag.
func splitTag(ref string) (repo, tag string) {
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

func lastElem(repo string) string { return repo[strings.LastIndex(repo, "/")+1:] }
