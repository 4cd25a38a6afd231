//go:build tools

// Package tools pins the release tools that `make release` runs.
package tools

import (
	_ "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod"
	_ "github.com/goreleaser/goreleaser/v2"
)
