package check

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kube-annotator/kube-annotator/pkg/resolve"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
)

// configMap is a ConfigMap of namespace a named name, labelled tenant=rules,
// whose rules.yaml is data (none when "").
func configMap(name, data string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: name, Labels: map[string]string{"tenant": "rules"}}}
	if data != "" {
		cm.Data = map[string]string{"rules.yaml": data}
	}
	return cm
}

// Tenant.Check reads the tenant's file as the controller finds it: by
// name, or the first by name that the selector finds, in a namespace the
// namespace selector admits; what it cannot find it says.
func TestTenantCheckFindsTheFile(t *testing.T) {
	allowed := "rules:\n- {name: team, resources: [pods], labels: {team: a}}\n"
	refused := "rules:\n- {name: evil, resources: [pods], labels: {evil: a}}\n"
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"tenant": "yes"}}}
	tests := []struct {
		name, section string
		objects       []runtime.Object
		want          []string // lines of the text, in order
		ok            bool
	}{
		{"by name", "configMap: rules", []runtime.Object{ns, configMap("rules", allowed), configMap("other", refused)},
			[]string{"1 of 1 rules in force"}, true},
		{"the first the selector finds", "configMapSelector: tenant=rules", []runtime.Object{ns, configMap("z", allowed), configMap("b", refused)},
			[]string{"0 of 1 rules in force; refused:", `rules[0].labels.evil: label key "evil" matches none of tenants.keys.labels (team)`}, false},
		{"no key in its data", "configMap: rules", []runtime.Object{ns, configMap("rules", "")},
			[]string{`no rule in force: configmap a/rules has no key "rules.yaml" in its data`}, false},
		{"no ConfigMap", "configMapSelector: tenant=rules", []runtime.Object{ns},
			[]string{`no configmap in a that tenants.configMapSelector (tenant=rules) finds: the tenant's rules file goes there, under the key "rules.yaml" of its data`}, false},
		{"a namespace not admitted", "configMap: rules\n  namespaceSelector: tenant=no", []runtime.Object{ns, configMap("rules", allowed)},
			[]string{"namespace a is not one tenants.namespaceSelector (tenant=no) admits: the controller reads no rule", "1 of 1 rules in force"}, false},
	}
	res, err := resolve.NewOffline("--crd")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			main, err := rules.Parse("rules.yaml", []byte("tenants:\n  "+tc.section+"\n  resources: [pods]\n  keys: {labels: [team]}\nrules: []\n"))
			if err != nil {
				t.Fatal(err)
			}
			r := NewReport("rules.yaml")
			tenant := &Tenant{MainPath: "rules.yaml", Main: main, Namespace: "a", Client: fake.NewClientset(tc.objects...), Resolver: res}
			if _, err := tenant.Check(t.Context(), r); err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			if err := r.PrintText(&text, false); err != nil {
				t.Fatal(err)
			}
			rest := text.String()
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("text lacks %q, in order:\n%s", w, text.String())
				}
				rest = rest[i+len(w):]
			}
			if r.Conclude() != tc.ok {
				t.Errorf("ok %v, want %v", r.OK, tc.ok)
			}
		})
	}
}
