package chart

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// alertCases are the chart's alerts, as rendered with each sharding mode,
// and their promtool tests in testdata.
var alertCases = []struct {
	name, tests string
	values      map[string]any
}{
	{"one leader", "alerts.test.yaml", map[string]any{"prometheusRule": map[string]any{"enabled": true}}},
	{"shard group", "alerts-sharded.test.yaml", map[string]any{"prometheusRule": map[string]any{"enabled": true},
		"sharding": map[string]any{"mode": "group"}}},
}

// promtoolTest is what TestAlertRules reads of a promtool test file.
type promtoolTest struct {
	RuleFiles []string `json:"rule_files"`
	Tests     []struct {
		AlertRuleTests []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// The rendered PrometheusRule passes `promtool check rules`, and `promtool
// test rules` with the cases of testdata: every alert has one in which it
// fires and one in which it does not, with each sharding mode's render. Without promtool on PATH the test
// is skipped, but fails under CI=true.
func TestAlertRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is not on PATH (Debian's prometheus package has it); CI=true requires it")
		}
		t.Skip("promtool is not on PATH")
	}
	ch, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	cover := alertCoverage{firing: map[string]bool{}, quiet: map[string]bool{}}
	var rendered []string
	for _, tc := range alertCases {
		t.Run(tc.name, func(t *testing.T) {
			manifests, err := Render(ch, tc.values, release, "kube-annotator", kubeVersion())
			if err != nil {
				t.Fatal(err)
			}
			prs := byKind(objects(t, manifests), "PrometheusRule")
			if len(prs) != 1 {
				t.Fatalf("%d PrometheusRules rendered, want 1", len(prs))
			}
			spec, err := yaml.Marshal(prs[0].Object["spec"])
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			rulesFile := filepath.Join(dir, "rules.yaml")
			if err := os.WriteFile(rulesFile, spec, 0o600); err != nil {
				t.Fatal(err)
			}
			tests, err := os.ReadFile(filepath.Join("testdata", tc.tests))
			if err != nil {
				t.Fatal(err)
			}
			alerts := alertNames(t, spec)
			rendered = append(rendered, alerts...)
			cover.add(t, tc.tests, tests, alerts)
			testsFile := filepath.Join(dir, tc.tests)
			if err := os.WriteFile(testsFile, tests, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"check", "rules", rulesFile}, {"test", "rules", testsFile}} {
				out, err := exec.Command(promtool, args...).CombinedOutput()
				if err != nil {
					t.Errorf("promtool %s: %v\n%s", strings.Join(args[:2], " "), err, out)
				}
			}
		})
	}
	for _, a := range slices.Compact(slices.Sorted(slices.Values(rendered))) {
		if !cover.firing[a] || !cover.quiet[a] {
			t.Errorf("alert %s: a promtool case where it fires: %v, one where it does not: %v; want both", a, cover.firing[a], cover.quiet[a])
		}
	}
}

// alertNames returns the names of the alerts of a PrometheusRule's spec.
func alertNames(t *testing.T, spec []byte) []string {
	t.Helper()
	var s struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(spec, &s); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range s.Groups {
		for _, r := range g.Rules {
			out = append(out, r.Alert)
		}
	}
	return out
}

// alertCoverage records, by alert, whether a promtool test has it fire and
// whether one has it stay quiet.
type alertCoverage struct{ firing, quiet map[string]bool }

// add reads the promtool tests in file, which must read rules.yaml, for the
// alerts rendered: a test of another alert is an error.
func (c alertCoverage) add(t *testing.T, file string, content []byte, alerts []string) {
	t.Helper()
	var pt promtoolTest
	if err := yaml.Unmarshal(content, &pt); err != nil { // the rest is promtool's to check
		t.Fatalf("%s: %v", file, err)
	}
	if !slices.Equal(pt.RuleFiles, []string{"rules.yaml"}) {
		t.Errorf("%s: rule_files %v, want [rules.yaml]", file, pt.RuleFiles)
	}
	for _, tg := range pt.Tests {
		for _, a := range tg.AlertRuleTests {
			switch {
			case !slices.Contains(alerts, a.Alertname):
				t.Errorf("%s tests %s, which this render of the chart lacks", file, a.Alertname)
			case len(a.ExpAlerts) > 0:
				c.firing[a.Alertname] = true
			default:
				c.quiet[a.Alertname] = true
			}
		}
	}
}
