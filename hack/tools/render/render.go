package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// imageRef is an image reference split as kustomize's images field wants it.
type imageRef struct {
	name, tag, digest string
}

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// parseImage splits REPOSITORY[:TAG][@DIGEST]; a port in the registry's
// host is not mistaken for a tag.
func parseImage(s string) (imageRef, error) {
	var r imageRef
	if s == "" {
		return r, fmt.Errorf("want REPOSITORY[:TAG][@DIGEST], got nothing")
	}
	rest, digest, hasDigest := strings.Cut(s, "@")
	if hasDigest && !digestRE.MatchString(digest) {
		return r, fmt.Errorf("%q: want the digest as sha256: and 64 hex digits, got %q", s, digest)
	}
	r.digest = digest
	r.name = rest
	if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
		r.name, r.tag = rest[:i], rest[i+1:]
		if r.tag == "" {
			return r, fmt.Errorf("%q: empty tag", s)
		}
	}
	if r.name == "" || strings.ContainsAny(r.name, " \t\n") {
		return r, fmt.Errorf("%q: bad repository %q", s, r.name)
	}
	return r, nil
}

// render builds the kustomization in dir under an overlay that sets the
// image named name to ref.
func render(dir, name string, ref imageRef) ([]byte, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(abs, "kustomization.yaml")); err != nil {
		return nil, fmt.Errorf("--dir %s: %w", dir, err)
	}
	overlay, err := os.MkdirTemp("", "kube-annotator-render-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(overlay)
	// kustomize takes a base by a relative path only.
	base, err := filepath.Rel(overlay, abs)
	if err != nil {
		return nil, err
	}
	k := types.Kustomization{
		TypeMeta:  types.TypeMeta{APIVersion: types.KustomizationVersion, Kind: types.KustomizationKind},
		Resources: []string{filepath.ToSlash(base)},
		Images:    []types.Image{{Name: name, NewName: ref.name, NewTag: ref.tag, Digest: ref.digest}},
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), data, 0o644); err != nil {
		return nil, err
	}
	// As `kubectl kustomize` orders them: namespaces first, webhooks last.
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionLegacy
	resMap, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), overlay)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	return resMap.AsYaml()
}

// comment turns text into YAML comment lines.
func comment(text string) []byte {
	if text == "" {
		return nil
	}
	var b bytes.Buffer
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString(strings.TrimRight("# "+line, " ") + "\n")
	}
	return b.Bytes()
}
