package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The README is what a new user reads first: it stays short, and the
// depth lives in docs/.
const maxREADMELines = 400

func TestREADMEIsShort(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > maxREADMELines {
		t.Errorf("README.md has %d lines, more than %d: move the depth to docs/", n, maxREADMELines)
	}
}

// The command that runs the tests is shown where a contributor builds from
// source, not only in the README's last lines.
func TestREADMEShowsTestCommandEarly(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	test, quickStart := strings.Index(readme, "\nmake test "), strings.Index(readme, "\n## Quick start\n")
	if test < 0 || quickStart < 0 || test > quickStart {
		t.Errorf("README.md: `make test` at offset %d, the Quick start heading at %d: want the command in a code block of Install, before Quick start", test, quickStart)
	}
}

// Every relative link in README.md, docs/*.md and examples/README.md
// names a file or directory that exists, and every #anchor a heading of
// its page.
func TestMarkdownLinks(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{"README.md", "examples/README.md"}, pages...)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		a, err := headingAnchors(page)
		if err != nil {
			t.Errorf("%v", err)
		}
		anchors[page] = a
		return a
	}
	for _, page := range pages {
		links, err := markdownLinks(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links {
			target, anchor, _ := strings.Cut(l.target, "#")
			file := page
			if target != "" {
				file = filepath.Join(filepath.Dir(page), target)
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", page, l.line, l.target, file)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(file, ".md") {
				t.Errorf("%s:%d: link %q: an anchor into a file that is not markdown", page, l.line, l.target)
				continue
			}
			if !anchorsOf(file)[anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading #%s", page, l.line, l.target, file, anchor)
			}
		}
	}
}

type mdLink struct {
	line   int
	target string
}

var (
	linkRE       = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	inlineCodeRE = regexp.MustCompile("`[^`]*`")
)

// markdownLinks returns the relative link targets of page, outside code.
func markdownLinks(page string) ([]mdLink, error) {
	var links []mdLink
	err := eachProseLine(page, func(n int, line string) {
		line = inlineCodeRE.ReplaceAllString(line, "")
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links = append(links, mdLink{n, target})
		}
	})
	return links, err
}

// headingAnchors returns the anchors GitHub gives the headings of page.
func headingAnchors(page string) (map[string]bool, error) {
	anchors := map[string]bool{}
	seen := map[string]int{}
	err := eachProseLine(page, func(_ int, line string) {
		if !strings.HasPrefix(line, "#") {
			return
		}
		text := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(text, " ") {
			return
		}
		slug := slugify(strings.TrimSpace(text))
		if k := seen[slug]; k > 0 {
			anchors[slug+"-"+strconv.Itoa(k)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	})
	return anchors, err
}

// slugify is GitHub's heading anchor: lower case, letters, digits, '-'
// and '_' kept, spaces made '-', everything else dropped.
func slugify(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// eachProseLine calls f with every line of page outside fenced code
// blocks, numbered from 1.
func eachProseLine(page string, f func(n int, line string)) error {
	file, err := os.Open(page)
	if err != nil {
		return err
	}
	defer file.Close()
	s := bufio.NewScanner(file)
	s.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	inFence := false
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if !inFence {
			f(n, line)
		}
	}
	return s.Err()
}

// Every test docs/claims.md names exists, so that a renamed or deleted
// test does not leave a README promise unbacked.
func TestClaimsNameExistingTests(t *testing.T) {
	b, err := os.ReadFile("docs/claims.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	funcRE := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	for _, root := range []string{".", "pkg", "test"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if root == "." && path != "." {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, "_test.go") {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range funcRE.FindAllStringSubmatch(string(src), -1) {
				defined[m[1]] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	named := regexp.MustCompile("`(Test\\w+)`").FindAllStringSubmatch(string(b), -1)
	if len(named) == 0 {
		t.Fatal("docs/claims.md names no test")
	}
	for _, m := range named {
		if !defined[m[1]] {
			t.Errorf("docs/claims.md names %s, which no _test.go file defines", m[1])
		}
	}
}
