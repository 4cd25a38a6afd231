package main

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// benchCommand is a command that makes figures: the benchmark, a Go
// test or benchmark, or a make target that runs them, with variables
// set before it.
var benchCommand = regexp.MustCompile(`^([A-Z_]+=\S+ )*(go run \./test/bench|go test|make bench)`)

// continued is the end of a recipe's line that goes on on the next.
var continued = regexp.MustCompile(`\\\n\s*`)

// codeSpan is a span of Markdown code.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// perfTable is a table of docs/performance.md and the command it
// follows: the last one named before it in its section.
type perfTable struct {
	line    int    // the table's first line, 1-based
	command string // "" when none precedes it in its section
}

// perfTables reads the tables of a page like docs/performance.md and the
// command each follows. A paragraph's lines are read as one, so that a
// command broken over lines is whole; a heading starts a section, with no
// command.
func perfTables(page string) (tables []perfTable, commands []string) {
	var command string
	var paragraph []string
	flush := func() {
		text := strings.Join(paragraph, " ")
		for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
			if c := strings.Join(strings.Fields(m[1]), " "); benchCommand.MatchString(c) {
				command = c
				commands = append(commands, c)
			}
		}
		paragraph = paragraph[:0]
	}
	inTable := false
	for i, line := range strings.Split(page, "\n") {
		switch {
		case strings.HasPrefix(line, "|"):
			if !inTable {
				flush()
				tables = append(tables, perfTable{line: i + 1, command: command})
			}
			inTable = true
			continue
		case strings.HasPrefix(line, "#"):
			flush()
			command = ""
		case strings.TrimSpace(line) == "":
			flush()
		default:
			paragraph = append(paragraph, line)
		}
		inTable = false
	}
	flush()
	return tables, commands
}

// runsCommand reports whether lines, the commands a make target runs,
// hold command, where a placeholder N in command stands for a number.
func runsCommand(lines []string, command string) bool {
	re := regexp.MustCompile("^" + regexp.MustCompile(`(^| )N( |$)`).ReplaceAllString(regexp.QuoteMeta(command), "$1[0-9]+$2") + "$")
	return slices.ContainsFunc(lines, re.MatchString)
}

// Every table of docs/performance.md comes from a command that
// make bench-docs runs, the last the page names before the table in its
// section; and the target runs nothing the page does not name. Tables
// that compare builds, or that later runs superseded, are in
// docs/performance-history.md.
func TestPerformanceTablesReproduced(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	b, err := os.ReadFile("docs/performance.md")
	if err != nil {
		t.Fatal(err)
	}
	tables, named := perfTables(string(b))
	out, err := exec.Command("make", "--no-print-directory", "-n", "bench-docs").Output()
	if err != nil {
		t.Fatalf("make -n bench-docs: %v", err)
	}
	var runs []string
	for _, line := range strings.Split(continued.ReplaceAllString(string(out), " "), "\n") {
		if c := strings.Join(strings.Fields(line), " "); benchCommand.MatchString(c) {
			runs = append(runs, c)
		}
	}
	if len(tables) == 0 || len(runs) == 0 {
		t.Fatalf("%d tables in docs/performance.md, %d commands in make bench-docs: want some of each", len(tables), len(runs))
	}
	for _, tb := range tables {
		switch {
		case tb.command == "":
			t.Errorf("docs/performance.md:%d: a table that follows no command in its section: name the command that makes it, or move it to docs/performance-history.md", tb.line)
		case !runsCommand(runs, tb.command):
			t.Errorf("docs/performance.md:%d: the table follows `%s`, which make bench-docs does not run", tb.line, tb.command)
		}
	}
	for _, r := range runs {
		if !slices.ContainsFunc(named, func(c string) bool { return runsCommand([]string{r}, c) }) {
			t.Errorf("make bench-docs runs `%s`, which docs/performance.md does not name", r)
		}
	}
}

// The reading of tables and commands that TestPerformanceTablesReproduced
// relies on.
func TestPerfTables(t *testing.T) {
	page := "# P\n\nno command\n\n| a |\n| --- |\n\n## S\n\n`go run ./test/bench --objects N\n--rounds 3` then\n\n| b |\n| --- |\n| 1 |\n\nmore `make bench-targets`\n\n| c |\n\n## T\n\n| d |\n"
	tables, named := perfTables(page)
	want := []perfTable{{5, ""}, {13, "go run ./test/bench --objects N --rounds 3"}, {19, "make bench-targets"}, {23, ""}}
	if !slices.Equal(tables, want) {
		t.Errorf("tables %+v, want %+v", tables, want)
	}
	if !slices.Equal(named, []string{"go run ./test/bench --objects N --rounds 3", "make bench-targets"}) {
		t.Errorf("commands %q", named)
	}
	for _, tc := range []struct {
		line, command string
		want          bool
	}{
		{"go run ./test/bench --objects 300000 --rounds 3", "go run ./test/bench --objects N --rounds 3", true},
		{"go run ./test/bench --objects 10000 --rounds 3", "go run ./test/bench --objects N --rounds 3", true},
		{"go run ./test/bench --objects 10000 --rounds 3 --steady 1s", "go run ./test/bench --objects N --rounds 3", false},
		{"go run ./test/bench --objects many --rounds 3", "go run ./test/bench --objects N --rounds 3", false},
		{"go test ./pkg/x -bench '^B(A|B)$'", "go test ./pkg/x -bench '^B(A|B)$'", true},
	} {
		if got := runsCommand([]string{tc.line}, tc.command); got != tc.want {
			t.Errorf("runsCommand(%q, %q) = %v, want %v", tc.line, tc.command, got, tc.want)
		}
	}
}
