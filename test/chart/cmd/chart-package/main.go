package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/kube-annotator/kube-annotator/test/chart"
)

func main() {
	version := flag.String("version", "", "Build version as `git describe` prints it (vX.Y.Z on a tag)")
	mtime := flag.String("mtime", "", "Date of every file in the archive, in Unix seconds (e.g. the last commit's)")
	out := flag.String("out", "dist", "Directory to write the archive to")
	repo := flag.String("image-repo", "", "With --image-digest: the image's repository, as image.repository")
	digest := flag.String("image-digest", "", "The release's image digest (sha256:…), as image.digest; empty keeps the chart's image values")
	flag.Parse()
	if err := run(*version, *mtime, *out, *repo, *digest); err != nil {
		fmt.Fprintln(os.Stderr, "chart-package:", err)
		os.Exit(1)
	}
}

func run(version, mtime, out, repo, digest string) error {
	secs, err := strconv.ParseInt(mtime, 10, 64)
	if err != nil {
		return fmt.Errorf("--mtime %q: want Unix seconds", mtime)
	}
	ch, err := chart.Load()
	if err != nil {
		return err
	}
	if digest != "" {
		if err := chart.PinImage(ch, repo, digest); err != nil {
			return err
		}
	}
	path, err := chart.Package(ch, version, time.Unix(secs, 0), out)
	if err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}
