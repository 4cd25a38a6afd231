package rules_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
	"github.com/kube-annotator/kube-annotator/pkg/rules/source"
)

// fuzzFile is the name Parse is given; every error must start with it.
const fuzzFile = "fuzz.yaml"

// fuzzGood are valid rules files, seeds from which the fuzzer mutates
// toward the decoder's success paths.
var fuzzGood = []string{
	"rules:\n- name: web\n  resources: [pods]\n  annotations: {team: web}\n",
	"version: v1\nrules:\n- name: frigates\n  resources:\n  - frigates.ship.nwiizo.dev\n  annotations:\n    sample-controller: \"True\"\n" +
		"- name: workloads\n  resources: [deployments, replicasets, pods]\n  annotations:\n    sample-controller: \"True\"\n",
	"rules: []\n",
	"---\nrules: []\n...\n",
	"rules:\n- name: a\n  resources: &res [deploy, pods]\n  annotations: &common\n    team: web\n    tier: \"1\"\n" +
		"- name: b\n  resources: *res\n  annotations: *common\n",
	"rules:\n- name: a\n  resources: [pods]\n  annotations:\n    example.com/team: web\n    Example.COM/Owner: x\n" +
		"    empty: \"\"\n    yes-is-a-string: yes\n    tagged: !!str 1\n    multi: |\n      line one\n      line two\n",
	"rules:\n- name: web\n  resources: [pods, deploy]\n  namespaces: [team-*]\n  excludeNamespaces: [kube-system]\n" +
		"  namespaceSelector: env in (prod)\n  selector: app=web,tier!=db\n  names: [\"web-?\"]\n" +
		"  annotations: {team: web, owner: {jsonPath: '{.metadata.labels.owner}'}}\n  labels: {managed: \"true\"}\n" +
		"  removeAnnotations: [old]\n  removeLabels: [legacy]\n",
	"rules:\n- {name: a, resources: [pods], annotations: {team: web}}\n- {name: b, resources: [po], annotations: {team: db}}\n",
	"rules:\n- name: a\n  resources: [pods]\n  labels:\n    name: {jsonPath: '{.metadata.name}', ifInvalid: truncate}\n" +
		"    id: {cel: \"object.metadata.name + '/x'\", ifInvalid: sanitize, default: none}\n" +
		"    cost: {fromNamespace: {annotation: example.com/cost}, ifInvalid: hash}\n",
}

// addFuzzSeeds adds the good files, the shipped rules.yaml and every file
// of the corpus as seeds.
func addFuzzSeeds(f *testing.F) {
	for _, s := range fuzzGood {
		f.Add([]byte(s))
	}
	paths := []string{filepath.Join("..", "..", "rules.yaml")}
	for _, dir := range []string{"bad", "conflict"} {
		more, err := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
		if err != nil {
			f.Fatal(err)
		}
		paths = append(paths, more...)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// FuzzParse checks that Parse never panics and that it either returns a
// file that obeys the schema, which the JSON Schema accepts too, or an
// error that names the file.
func FuzzParse(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := rules.Parse(fuzzFile, data)
		again, errAgain := rules.Parse(fuzzFile, data)
		if !reflect.DeepEqual(file, again) || fmt.Sprint(err) != fmt.Sprint(errAgain) {
			t.Fatalf("Parse is not deterministic:\n%+v, %v\n%+v, %v", file, err, again, errAgain)
		}
		if err != nil {
			if file != nil {
				t.Errorf("Parse returned a File with its error")
			}
			checkFuzzError(t, err)
			return
		}
		checkFuzzFile(t, file)
		checkAgainstUnmarshal(t, data, file)
		checkRoundTrip(t, file)
		checkSchemaAccepts(t, data)
	})
}

// checkFuzzError asserts that err is a *rulefile.Error for fuzzFile with at
// least one problem, in line order, each saying something.
func checkFuzzError(t *testing.T, err error) {
	t.Helper()
	var rerr *rulefile.Error
	if !errors.As(err, &rerr) {
		t.Fatalf("error = %v (%T), want a *rulefile.Error", err, err)
	}
	if rerr.File != fuzzFile || len(rerr.Fields) == 0 {
		t.Fatalf("Error{File: %q, %d Fields}, want File %q and at least one field", rerr.File, len(rerr.Fields), fuzzFile)
	}
	if !strings.HasPrefix(err.Error(), fuzzFile+":") {
		t.Errorf("error does not start with %q: %s", fuzzFile+":", err)
	}
	for i, fe := range rerr.Fields {
		if fe.Message == "" || fe.Line < 0 {
			t.Errorf("Fields[%d] = %+v, want a message and a line >= 0", i, fe)
		}
		if i > 0 && fe.Line < rerr.Fields[i-1].Line {
			t.Errorf("Fields[%d] on line %d follows line %d; want line order", i, fe.Line, rerr.Fields[i-1].Line)
		}
	}
}

// checkFuzzFile asserts that a parsed file obeys the rules Parse enforces:
// names, resources, and annotations the API server would accept.
func checkFuzzFile(t *testing.T, file *rulefile.File) {
	t.Helper()
	if file.Version != rulefile.Version {
		t.Errorf("Version = %q, want %q", file.Version, rulefile.Version)
	}
	names := map[string]int{}
	for i, r := range file.Rules {
		if msgs := validation.IsDNS1123Label(r.Name); len(msgs) > 0 {
			t.Errorf("rules[%d].name %q: %v", i, r.Name, msgs)
		}
		if first, dup := names[r.Name]; dup {
			t.Errorf("rules[%d].name %q: rules[%d] has it too", i, r.Name, first)
		}
		names[r.Name] = i
		if len(r.Resources) == 0 {
			t.Errorf("rules[%d]: no resources", i)
		}
		seen := map[string]bool{}
		for j, res := range r.Resources {
			if res == "" || strings.ContainsAny(res, " \t\n/,") || !utf8.ValidString(res) || seen[res] {
				t.Errorf("rules[%d].resources[%d] = %q: empty, invalid or duplicate", i, j, res)
			}
			seen[res] = true
		}
		size := 0
		for k, v := range r.Annotations.Values {
			if msgs := validation.IsQualifiedName(strings.ToLower(k)); len(msgs) > 0 {
				t.Errorf("rules[%d].annotations key %q: %v", i, k, msgs)
			}
			if !utf8.ValidString(v) {
				t.Errorf("rules[%d].annotations.%s = %q: not UTF-8", i, k, v)
			}
			size += len(k) + len(v)
		}
		if size > apivalidation.TotalAnnotationSizeLimitB {
			t.Errorf("rules[%d].annotations: %d bytes, over %d", i, size, apivalidation.TotalAnnotationSizeLimitB)
		}
	}
}

// checkAgainstUnmarshal compares what Parse read with what the YAML
// library's own decoder reads from the same bytes, where that succeeds:
// walking nodes must not change a name, resource or annotation.
func checkAgainstUnmarshal(t *testing.T, data []byte, file *rulefile.File) {
	t.Helper()
	var doc struct {
		Rules []map[string]any `yaml:"rules"`
	}
	if !unmarshalQuietly(data, &doc) {
		return
	}
	if len(doc.Rules) != len(file.Rules) {
		t.Fatalf("Parse read %d rules, yaml.Unmarshal %d", len(file.Rules), len(doc.Rules))
	}
	for i, r := range file.Rules {
		u := doc.Rules[i]
		if u["name"] != r.Name {
			t.Errorf("rules[%d].name: Parse read %q, yaml.Unmarshal %#v", i, r.Name, u["name"])
		}
		res, _ := u["resources"].([]any)
		if len(res) != len(r.Resources) {
			t.Errorf("rules[%d].resources: Parse read %q, yaml.Unmarshal %#v", i, r.Resources, u["resources"])
		}
		for j := range min(len(res), len(r.Resources)) {
			if res[j] != r.Resources[j] {
				t.Errorf("rules[%d].resources[%d]: Parse read %q, yaml.Unmarshal %#v", i, j, r.Resources[j], res[j])
			}
		}
		ann, _ := u["annotations"].(map[string]any)
		for k, v := range r.Annotations.Values {
			if ann[k] != v {
				t.Errorf("rules[%d].annotations.%s: Parse read %q, yaml.Unmarshal %#v", i, k, v, ann[k])
			}
		}
	}
}

// unmarshalQuietly reports whether yaml.Unmarshal decodes data into out.
// It may refuse what Parse accepts (excessive aliasing) and, being a
// third-party oracle, its panics are not Parse's bugs.
func unmarshalQuietly(data []byte, out any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return yaml.Unmarshal(data, out) == nil
}

// checkRoundTrip writes the names, resources and annotations of a parsed
// file back as YAML and parses that: the same values must come back, so
// that nothing Parse accepts is something it cannot read when written
// out plainly.
func checkRoundTrip(t *testing.T, file *rulefile.File) {
	t.Helper()
	type plainRule struct {
		Name        string            `yaml:"name"`
		Resources   []string          `yaml:"resources"`
		Annotations map[string]string `yaml:"annotations"`
	}
	var plain struct {
		Rules []plainRule `yaml:"rules"`
	}
	plain.Rules = []plainRule{}
	for _, r := range file.Rules {
		if len(r.Annotations.Values) > 0 { // a rule must set something
			plain.Rules = append(plain.Rules, plainRule{r.Name, r.Resources, r.Annotations.Values})
		}
	}
	out, err := yaml.Marshal(plain)
	if err != nil {
		t.Fatalf("yaml.Marshal: %v", err)
	}
	back, err := rules.Parse(fuzzFile, out)
	if err != nil {
		t.Fatalf("Parse of the file written back:\n%s\nerror: %v", out, err)
	}
	for i, r := range back.Rules {
		want := plain.Rules[i]
		if r.Name != want.Name || !reflect.DeepEqual(r.Resources, want.Resources) || !reflect.DeepEqual(r.Annotations.Values, want.Annotations) {
			t.Errorf("round trip of rules[%d]:\n got %+v\nwant %+v", i, r, want)
		}
	}
}

// fuzzResolve resolves the names corpusResolve knows, fails names with an
// "x", and makes up a resource for the rest, where a plural and its
// singular are one resource: random files then share resources often.
func fuzzResolve(name string) (source.Resource, error) {
	if r, err := corpusResolve(name); err == nil {
		return r, nil
	}
	if strings.Contains(name, "x") {
		return source.Resource{}, fmt.Errorf("the server doesn't have a resource type %q", name)
	}
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: strings.TrimSuffix(name, "s")}
	return source.Resource{GVR: gvr, Namespaced: len(name)%2 == 0}, nil
}

var (
	conflictField = regexp.MustCompile(`^rules\[(\d+)\]\.`)
	conflictWith  = regexp.MustCompile(`conflicts with rules\[(\d+)\]`)
)

// FuzzCompile checks that Compile never panics on a file Parse accepted,
// leaves the file as it was, and reports a conflict only between two rules
// that share a resource, and always when two rules that select every object
// set one annotation to different values.
func FuzzCompile(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := rules.Parse(fuzzFile, data)
		if err != nil {
			return
		}
		set, _, err := rules.Compile(fuzzFile, file, fuzzResolve)
		if again, _ := rules.Parse(fuzzFile, data); !reflect.DeepEqual(file, again) {
			t.Fatalf("Compile changed the File:\n%+v\nwas\n%+v", file, again)
		}
		if err == nil {
			if set == nil {
				t.Fatal("Compile returned neither a Set nor an error")
			}
			if i, j, k := staticConflict(file); i >= 0 {
				t.Errorf("no conflict reported, but rules[%d] and rules[%d] set %q to different values on one resource", i, j, k)
			}
			return
		}
		if set != nil {
			t.Errorf("Compile returned a Set with its error")
		}
		checkFuzzConflict(t, file, err)
	})
}

// checkFuzzConflict asserts that err is a *rulefile.Error whose every field is
// a conflict naming two different rules of file that share a resource.
func checkFuzzConflict(t *testing.T, file *rulefile.File, err error) {
	t.Helper()
	var rerr *rulefile.Error
	if !errors.As(err, &rerr) || rerr.File != fuzzFile || len(rerr.Fields) == 0 {
		t.Fatalf("error = %v (%T), want a *rulefile.Error for %s", err, err, fuzzFile)
	}
	for _, fe := range rerr.Fields {
		m, n := conflictField.FindStringSubmatch(fe.Field), conflictWith.FindStringSubmatch(fe.Message)
		if m == nil || n == nil {
			t.Errorf("%s: %s: want a field of rules[M] that conflicts with rules[N]", fe.Field, fe.Message)
			continue
		}
		i, _ := strconv.Atoi(m[1])
		j, _ := strconv.Atoi(n[1])
		if i == j || i >= len(file.Rules) || j >= len(file.Rules) {
			t.Errorf("%s: %s: want two different rules of %d", fe.Field, fe.Message, len(file.Rules))
			continue
		}
		if !shareResource(file.Rules[i], file.Rules[j]) {
			t.Errorf("%s: %s: the rules share no resource", fe.Field, fe.Message)
		}
	}
}

// staticConflict returns two rules that select every object of a resource
// they share and set one annotation to different values, or -1.
func staticConflict(file *rulefile.File) (int, int, string) {
	for j, b := range file.Rules {
		for i, a := range file.Rules[:j] {
			if a.Selective() || b.Selective() || !shareResource(a, b) {
				continue
			}
			for k, v := range a.Annotations.Values {
				if w, ok := b.Annotations.Values[k]; ok && w != v {
					return i, j, k
				}
			}
		}
	}
	return -1, -1, ""
}

// shareResource reports whether two rules name one resource, as fuzzResolve
// resolves names.
func shareResource(a, b rulefile.Rule) bool {
	grs := map[schema.GroupResource]bool{}
	for _, name := range a.Resources {
		if r, err := fuzzResolve(name); err == nil {
			grs[r.GVR.GroupResource()] = true
		}
	}
	for _, name := range b.Resources {
		if r, err := fuzzResolve(name); err == nil && grs[r.GVR.GroupResource()] {
			return true
		}
	}
	return false
}
