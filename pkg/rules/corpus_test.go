package rules_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// The corpus is a file-based suite, apart from the inline tables of
// load_test.go: testdata/bad holds malformed rules files, one problem each,
// with the error each must produce in testdata/bad/expect.txt;
// testdata/conflict holds files that load but whose rules conflict.
// Inputs too large to commit are generated at run time (generatedCases).

const (
	// corpusTimeout bounds one Load: every input, hostile or not, must be
	// answered quickly.
	corpusTimeout = 5 * time.Second
	// corpusMaxAlloc bounds what one Load of a small file may allocate.
	corpusMaxAlloc = 64 << 20
)

func TestCorpusBad(t *testing.T) {
	dir := filepath.Join("testdata", "bad")
	want := corpusExpectations(t, dir)
	for _, name := range slices.Sorted(maps.Keys(want)) {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			checkCorpusComment(t, path, want[name][0])
			checkLoadFails(t, path, want[name], corpusMaxAlloc)
		})
	}
}

// checkCorpusComment asserts that a bad file that is YAML text starts with
// a comment line saying what is wrong and quoting what the error must
// contain. Files that are not text (empty, blank, or with NUL bytes) have
// no comment.
func checkCorpusComment(t *testing.T, path, want string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(bytes.TrimSpace(data)) == 0 || bytes.IndexByte(data, 0) >= 0 {
		return
	}
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if !bytes.HasPrefix(first, []byte("# ")) || !bytes.Contains(first, []byte(want)) {
		t.Errorf("first line %q: want a comment saying what is wrong and quoting %q", first, want)
	}
}

// generatedCase is a bad input generated into a temporary directory, for
// inputs too large or too regular to commit.
type generatedCase struct {
	name     string
	content  func() string
	want     []string
	maxAlloc uint64 // 0 means corpusMaxAlloc
	// knownBug, when set, skips the case with this explanation; want is
	// then a guess at the error that the fix will bring.
	knownBug string
}

// ruleHeadYAML starts a file whose one rule's annotations follow.
const ruleHeadYAML = "rules:\n- name: web\n  resources: [pods]\n  annotations:\n"

// nestedYAML is leaf inside n levels of open … close.
func nestedYAML(n int, open, leaf, close string) string {
	return strings.Repeat(open, n) + leaf + strings.Repeat(close, n)
}

// generatedCases are the bad inputs written at run time.
var generatedCases = []generatedCase{
	{name: "oversize-file.yaml", content: func() string {
		return "rules: []\n#" + strings.Repeat("x", rulefile.MaxFileSize-11) + "\n"
	}, want: []string{fmt.Sprintf("file is larger than %d bytes", rulefile.MaxFileSize)}, maxAlloc: 8 << 20},
	// Load must stop reading at MaxFileSize, not read 16 MiB and then refuse.
	{name: "oversize-file-16mib.yaml", content: func() string {
		return "rules: []\n#" + strings.Repeat("x", 16<<20) + "\n"
	}, want: []string{fmt.Sprintf("file is larger than %d bytes", rulefile.MaxFileSize)}, maxAlloc: 8 << 20},
	{name: "deep-nested-lists.yaml", content: func() string {
		return "rules: " + nestedYAML(10000, "[", "", "]") + "\n"
	}, want: []string{"rules[0]: must be a mapping", "got a list"}},
	{name: "deep-nested-lists-past-parser-limit.yaml", content: func() string {
		return "rules: " + nestedYAML(100000, "[", "", "]") + "\n"
	}, want: []string{"invalid YAML: exceeded max depth of 10000"}},
	{name: "deep-nested-block-lists.yaml", content: func() string {
		return "rules:\n" + strings.Repeat("- ", 10000) + "web\n"
	}, want: []string{"rules[0]: must be a mapping", "got a list"}},
	{name: "deep-nested-mappings.yaml", content: func() string {
		return ruleHeadYAML + "    team: " + nestedYAML(10000, "{a: ", "b", "}") + "\n"
	}, want: []string{"rules[0].annotations.team: value must be a string", "got a mapping"}},
	{name: "deep-nested-block-mappings.yaml", content: func() string {
		var b strings.Builder
		b.WriteString("rules:\n")
		for i := range 1000 {
			b.WriteString(strings.Repeat(" ", i+1) + "a:\n")
		}
		return b.String()
	}, want: []string{"rules: must be a list of rules, got a mapping"}},
	{name: "annotation-value-over-256kib.yaml", content: func() string {
		return ruleHeadYAML + "    team: " + strings.Repeat("x", 256<<10) + "\n"
	}, want: []string{"rules[0].annotations: annotations total 262148 bytes, more than the API server accepts (262144)"}},
	{name: "many-duplicate-names.yaml", content: func() string {
		return "rules:\n" + strings.Repeat("- {name: a, resources: [pods], annotations: {a: b}}\n", 1000)
	}, want: []string{`rules[99].name: duplicate name "a"; rules[0] already uses it`, "stopped after 100 problems"}},
	// As many errors as 32 KiB can hold, one per two bytes: the first 100
	// are reported.
	{name: "many-errors.yaml", content: func() string {
		return "rules: [" + strings.Repeat("1,", 16<<10) + "1]\n"
	}, want: []string{"rules[99]: must be a mapping", "stopped after 100 problems"}, maxAlloc: 32 << 20},
	{name: "alias-amplified-errors.yaml", content: func() string {
		// 7 KB: one rule with 1,000 bad resources, aliased by 1,000 rules.
		return "rules:\n- &r {name: a, resources: [" + strings.TrimSuffix(strings.Repeat("1,", 1000), ",") +
			"], annotations: {a: b}}\n" + strings.Repeat("- *r\n", 1000)
	}, want: []string{"stopped after 100 problems"}},
	{name: "alias-amplified-annotations.yaml", content: func() string {
		// 60 KB, valid: 1,000 rules share one mapping of 1,000 annotations.
		var b strings.Builder
		b.WriteString("rules:\n- name: r0\n  resources: [pods]\n  annotations: &m {k0: v")
		for i := 1; i < 1000; i++ {
			fmt.Fprintf(&b, ", k%d: v", i)
		}
		b.WriteString("}\n")
		for i := 1; i < 1000; i++ {
			fmt.Fprintf(&b, "- {name: r%d, resources: [pods], annotations: *m}\n", i)
		}
		return b.String()
	}, want: []string{"excessive aliasing"}},
	{name: "too-many-rules.yaml", content: func() string {
		// 3,501 valid rules, no alias: refused for their number, not as aliasing.
		var b strings.Builder
		b.WriteString("rules:\n")
		for i := range rulefile.MaxRules + 1 {
			fmt.Fprintf(&b, "- {name: r%d, resources: [pods], names: [p%d], annotations: {a: v}}\n", i, i)
		}
		return b.String()
	}, want: []string{"rules: holds 3501 rules, more than the 3500 a file may hold"}},
}

func TestCorpusGenerated(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range generatedCases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.knownBug != "" {
				t.Skip("known bug, remove this skip when fixed: " + tc.knownBug)
			}
			path := filepath.Join(dir, tc.name)
			if err := os.WriteFile(path, []byte(tc.content()), 0o600); err != nil {
				t.Fatal(err)
			}
			limit := tc.maxAlloc
			if limit == 0 {
				limit = corpusMaxAlloc
			}
			checkLoadFails(t, path, tc.want, limit)
		})
	}
}

func TestCorpusConflict(t *testing.T) {
	dir := filepath.Join("testdata", "conflict")
	want := corpusExpectations(t, dir)
	for _, name := range slices.Sorted(maps.Keys(want)) {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			f, err := rules.Load(path)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			set, unresolved, err := rules.Compile(path, f, corpusResolve)
			if len(unresolved) > 0 {
				t.Errorf("unresolved: %v; use a name corpusResolve knows", unresolved)
			}
			if set != nil {
				t.Errorf("Compile returned a Set with a conflict")
			}
			checkRulesError(t, path, err, want[name])
		})
	}
}

// corpusExpectations reads dir/expect.txt: lines "file  substring", where a
// file may have several lines. It fails the test when a file in dir has no
// expectation or an expectation has no file.
func corpusExpectations(t *testing.T, dir string) map[string][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "expect.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string][]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, sub, _ := strings.Cut(line, " ")
		if sub = strings.TrimSpace(sub); sub == "" {
			t.Fatalf("expect.txt:%d: want a file name, spaces and a substring", n)
		}
		want[name] = append(want[name], sub)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, e := range entries {
		if e.Name() == "expect.txt" {
			continue
		}
		files[e.Name()] = true
		if want[e.Name()] == nil {
			t.Errorf("%s has no expectation in expect.txt", filepath.Join(dir, e.Name()))
		}
	}
	for name := range want {
		if !files[name] {
			t.Errorf("expect.txt names %s, which is not in %s", name, dir)
			delete(want, name)
		}
	}
	return want
}

// loadResult is what one bounded Load returned.
type loadResult struct {
	file     *rulefile.File
	err      error
	panicked any
	stack    []byte
	alloc    uint64 // bytes allocated while loading
}

// loadBounded runs rules.Load in a goroutine, recovering a panic and
// measuring allocation, and fails the test if it takes longer than
// corpusTimeout.
func loadBounded(t *testing.T, path string) loadResult {
	t.Helper()
	done := make(chan loadResult, 1)
	go func() {
		var res loadResult
		defer func() {
			if p := recover(); p != nil {
				res.panicked, res.stack = p, debug.Stack()
			}
			done <- res
		}()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res.file, res.err = rules.Load(path)
		runtime.ReadMemStats(&after)
		res.alloc = after.TotalAlloc - before.TotalAlloc
	}()
	select {
	case res := <-done:
		return res
	case <-time.After(corpusTimeout):
		t.Fatalf("Load(%s) did not return within %v", path, corpusTimeout)
		return loadResult{}
	}
}

// checkLoadFails asserts that loading path fails, within time and maxAlloc,
// with a *rulefile.Error that names the file and contains every want.
func checkLoadFails(t *testing.T, path string, want []string, maxAlloc uint64) {
	t.Helper()
	res := loadBounded(t, path)
	if res.panicked != nil {
		t.Fatalf("Load panicked: %v\n%s", res.panicked, res.stack)
	}
	if res.file != nil {
		t.Errorf("Load returned a File: %+v", res.file)
	}
	checkRulesError(t, path, res.err, want)
	if raceEnabled {
		maxAlloc *= 4 // the race detector's instrumentation allocates too
	}
	if res.alloc > maxAlloc {
		t.Errorf("Load allocated %d MiB, want at most %d MiB", res.alloc>>20, maxAlloc>>20)
	}
}

// checkRulesError asserts that err is a *rulefile.Error for path whose every
// line names the file and whose text contains every want.
func checkRulesError(t *testing.T, path string, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("error = nil, want one containing %q", want)
	}
	var rerr *rulefile.Error
	if !errors.As(err, &rerr) {
		t.Fatalf("error = %v (%T), want a *rulefile.Error", abbrev(err.Error()), err)
	}
	msg := err.Error()
	if rerr.File != path || len(rerr.Fields) == 0 {
		t.Errorf("Error{File: %q, %d Fields}, want File %q and at least one field", rerr.File, len(rerr.Fields), path)
	}
	for i, line := range strings.Split(msg, "\n") {
		if !strings.HasPrefix(line, path+":") {
			t.Errorf("line %d of the error does not start with %q: %s", i, path+":", abbrev(line))
			break
		}
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error does not contain %q:\n%s", w, abbrev(msg))
		}
	}
}

// abbrev shortens s for a failure message: some errors run to megabytes.
func abbrev(s string) string {
	const max = 4000
	if len(s) <= max {
		return s
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:max], len(s)-max)
}

// corpusResolve resolves resource names as a small cluster's discovery
// would, with several names for one resource; other names are not found.
func corpusResolve(name string) (source.Resource, error) {
	core := func(resource string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Version: "v1", Resource: resource}
	}
	apps := schema.GroupVersionResource{Group: "apps", Version: "v1"}
	frigates := schema.GroupVersionResource{Group: "ship.nwiizo.dev", Version: "v1", Resource: "frigates"}
	frigatesV2 := frigates
	frigatesV2.Version = "v2"
	deploy, rs := apps, apps
	deploy.Resource, rs.Resource = "deployments", "replicasets"
	known := map[string]source.Resource{
		"pods": {GVR: core("pods"), Namespaced: true}, "pod": {GVR: core("pods"), Namespaced: true},
		"po": {GVR: core("pods"), Namespaced: true}, "namespaces": {GVR: core("namespaces")},
		"ns": {GVR: core("namespaces")}, "deployments": {GVR: deploy, Namespaced: true},
		"deploy": {GVR: deploy, Namespaced: true}, "deployments.v1.apps": {GVR: deploy, Namespaced: true},
		"replicasets": {GVR: rs, Namespaced: true}, "rs": {GVR: rs, Namespaced: true},
		"frigates.ship.nwiizo.dev": {GVR: frigates, Namespaced: true}, "frigates.v2.ship.nwiizo.dev": {GVR: frigatesV2, Namespaced: true},
	}
	r, ok := known[name]
	if !ok {
		return source.Resource{}, fmt.Errorf("the server doesn't have a resource type %q", name)
	}
	return r, nil
}
