package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxPackageLines is how many non-test lines a package may hold: past
// about 2,000 a package holds several jobs, to split by the question each
// answers (lower packages importing none of the upper ones, deps_test.go).
const maxPackageLines = 2000

// oversized are the packages over maxPackageLines today, each with its
// size as a ceiling. The table only shrinks: a package here may not grow
// past its ceiling, and one back under maxPackageLines leaves the table.
// It is empty: every package is within the limit.
var oversized = map[string]struct {
	ceiling int
	why     string
}{}

// packageDirs returns every directory of the repository, as a slash path
// relative to its root, that holds .go files, with the number of lines
// (newlines, as wc -l counts them) of its non-test ones. Hidden
// directories and testdata are not packages.
func packageDirs(t *testing.T) map[string]int {
	t.Helper()
	dirs := map[string]int{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		dirs[dir] += 0
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dirs[dir] += bytes.Count(b, []byte("\n"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// Packages stay small enough to hold in one's head: none passes
// maxPackageLines non-test lines but those in oversized, none of which
// grows past its ceiling or stays in the table once back under the limit.
func TestPackageSize(t *testing.T) {
	dirs := packageDirs(t)
	for dir, n := range dirs {
		o, listed := oversized[dir]
		switch {
		case !listed && n > maxPackageLines:
			t.Errorf("%s has %d non-test lines, more than %d: split it by the question each part answers", dir, n, maxPackageLines)
		case listed && n > o.ceiling:
			t.Errorf("%s has %d non-test lines, past its ceiling of %d in oversized: split it rather than grow it (%s)", dir, n, o.ceiling, o.why)
		case listed && n <= maxPackageLines:
			t.Errorf("%s has %d non-test lines, no more than %d: remove it from oversized", dir, n, maxPackageLines)
		case listed && n < o.ceiling:
			t.Logf("%s has %d non-test lines: its ceiling in oversized may come down from %d", dir, n, o.ceiling)
		}
	}
	for dir := range oversized {
		if _, ok := dirs[dir]; !ok {
			t.Errorf("oversized names %s, which holds no Go package: remove it", dir)
		}
	}
}

// maxDocLines is how long a doc.go may be: a front door, not a manual.
const maxDocLines = 40

// Every package under pkg/ and test/, and the command at the root, has a
// doc.go as its front door: the package comment, in that file alone,
// saying what the package offers and where a reader starts.
func TestPackageDocs(t *testing.T) {
	var dirs []string
	for dir := range packageDirs(t) {
		if dir == "." || strings.HasPrefix(dir, "pkg/") || strings.HasPrefix(dir, "test/") {
			dirs = append(dirs, dir)
		}
	}
	slices.Sort(dirs)
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		doc := filepath.Join(dir, "doc.go")
		if !slices.Contains(files, doc) {
			t.Errorf("%s has no doc.go: give the package a front door", dir)
		}
		for _, f := range files {
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			text := file.Doc.Text()
			switch {
			case f != doc && text != "":
				t.Errorf("%s holds a package comment: it belongs in doc.go", f)
			case f == doc && !strings.HasPrefix(text, "Package "+file.Name.Name+" ") && !strings.HasPrefix(text, "Command "):
				t.Errorf("%s: the package comment starts %q, want \"Package %s …\" (or \"Command …\")", f, strings.SplitN(text, "\n", 2)[0], file.Name.Name)
			}
			if f == doc {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if n := bytes.Count(b, []byte("\n")); n > maxDocLines {
					t.Errorf("%s has %d lines, more than %d: keep the front door short, the detail on the types and functions", f, n, maxDocLines)
				}
			}
		}
	}
}
