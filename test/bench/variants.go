package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// variant is one more kube-annotator runner measured in each round beside
// the four: another build of it, or it with environment variables or
// flags of its own, so that a change is measured against the product in
// one run, under the same load.
type variant struct {
	name, binary string
	env, args    []string
}

// parseVariant parses NAME=BINARY[,ENV=VALUE|,--flag=value]...; an empty
// BINARY is --binary.
func parseVariant(s string) (variant, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" || strings.ContainsAny(name, " /") {
		return variant{}, fmt.Errorf("--variant %q: want NAME=BINARY[,ENV=VALUE|,--flag=value]...", s)
	}
	fields := strings.Split(rest, ",")
	v := variant{name: name, binary: fields[0]}
	for _, f := range fields[1:] {
		switch {
		case strings.HasPrefix(f, "--"):
			v.args = append(v.args, f)
		case strings.Contains(f, "="):
			v.env = append(v.env, f)
		default:
			return variant{}, fmt.Errorf("--variant %q: %q is neither ENV=VALUE nor --flag=value", s, f)
		}
	}
	if slices.Contains([]string{rawRunner, rawMetadataRunner, rawMetadataWatchRunner, crRunner, kaRunner}, name) {
		return variant{}, fmt.Errorf("--variant %q: %s names a runner already", s, name)
	}
	return v, nil
}

// variantRunners returns a runner for each --variant, as ka but with the
// variant's binary, environment and flags.
func (b *bench) variantRunners(ka *runner) ([]*runner, error) {
	var out []*runner
	for _, v := range b.opts.variants {
		r := *ka
		r.name = v.name
		if v.binary != "" {
			bin, err := filepath.Abs(v.binary)
			if err != nil {
				return nil, err
			}
			r.bin = bin
		}
		r.env = v.env
		r.args = append(slices.Clone(ka.args), v.args...)
		out = append(out, &r)
	}
	return out, nil
}

// measured reports whether the rounds run the runner named name: every
// runner unless --runners names some.
func (o options) measured(name string) bool {
	return len(o.runners) == 0 || slices.Contains(o.runners, name)
}

// runnerNames are the runners of s's runs, in the order in which they ran.
func (s *shapeResults) runnerNames() []string {
	var names []string
	for _, run := range s.runs {
		if !slices.Contains(names, run.runner) {
			names = append(names, run.runner)
		}
	}
	return names
}
