package policysync

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/kube-annotator/kube-annotator/pkg/admission"
	"github.com/kube-annotator/kube-annotator/pkg/rules"
	"github.com/kube-annotator/kube-annotator/pkg/rules/rulestest"
	"github.com/kube-annotator/kube-annotator/test/testutil"
)

func translate(manager string) TranslateFunc {
	return func(set *rules.Set) ([]admission.Policy, []admission.Note, error) {
		return admission.Translate(set, admission.Options{FieldManager: manager})
	}
}

// names lists the policies and bindings in the cluster, as "policy/name"
// and "binding/name".
func names(t *testing.T, client *fake.Clientset) []string {
	t.Helper()
	var out []string
	ps, err := client.AdmissionregistrationV1().MutatingAdmissionPolicies().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps.Items {
		out = append(out, "policy/"+p.Name)
	}
	bs, err := client.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs.Items {
		out = append(out, "binding/"+b.Name)
	}
	slices.Sort(out)
	return out
}

func TestSync(t *testing.T) {
	// Someone else's policy, and another field manager's: never touched.
	theirs := &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "theirs",
		Labels: map[string]string{admission.ManagedByLabel: "someone"}}}
	other := &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "other.a",
		Labels: map[string]string{admission.ManagedByLabel: admission.ManagedBy, admission.FieldManagerLabel: "other"}}}
	client := fake.NewClientset(theirs, other)
	s := New(Options{Client: client.AdmissionregistrationV1(), FieldManager: "kube-annotator", Translate: translate("kube-annotator")})
	sync := func(content string) bool {
		t.Helper()
		policies, _, err := s.opts.Translate(rulestest.Compile(t, content, rulestest.ConfigMaps))
		if err != nil {
			t.Fatal(err)
		}
		changed, err := s.Sync(t.Context(), policies)
		if err != nil {
			t.Fatalf("Sync() error = %v", err)
		}
		return changed
	}
	const two = "rules:\n- {name: a, resources: [configmaps], annotations: {a: '1'}}\n- {name: b, resources: [configmaps], annotations: {b: '1'}}\n"
	steps := []struct {
		name        string
		rules       string
		wantChanged bool
		want        []string
	}{
		{"created", two, true, []string{"binding/kube-annotator.a", "binding/kube-annotator.b", "binding/other.a",
			"policy/kube-annotator.a", "policy/kube-annotator.b", "policy/theirs"}},
		{"the same rules: nothing changes", two, false, nil},
		{"a rule removed: its policy and binding deleted", "rules:\n- {name: a, resources: [configmaps], annotations: {a: '1'}}\n", true,
			[]string{"binding/kube-annotator.a", "binding/other.a", "policy/kube-annotator.a", "policy/theirs"}},
		{"a rule edited: updated", "rules:\n- {name: a, resources: [configmaps], annotations: {a: '2'}}\n", true, nil},
	}
	var last []string
	for _, st := range steps {
		if got := sync(st.rules); got != st.wantChanged {
			t.Errorf("%s: changed = %v, want %v", st.name, got, st.wantChanged)
		}
		want := st.want
		if want == nil {
			want = last
		}
		if got := names(t, client); !slices.Equal(got, want) {
			t.Errorf("%s: cluster has %q, want %q", st.name, got, want)
		}
		last = want
	}
	p, err := client.AdmissionregistrationV1().MutatingAdmissionPolicies().Get(t.Context(), "kube-annotator.a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if expr := p.Spec.Variables[0].Expression; !slices.Contains([]string{expr}, `(true && true) ? optional.of("2") : optional.none()`) {
		t.Errorf("policy not updated: %s", expr)
	}
}

// Wrap syncs, waits for the API server when the policies changed, then
// applies the rules; a failed sync does not keep the rules from the
// controller, and Run retries it.
func TestWrapAndRun(t *testing.T) {
	client := fake.NewClientset()
	s := New(Options{Client: client.AdmissionregistrationV1(), FieldManager: "kube-annotator", Translate: translate("kube-annotator"),
		Settle: time.Second, Interval: time.Hour, Retry: 10 * time.Millisecond})
	var applied []*rules.Set
	apply := s.Wrap(func(_ context.Context, set *rules.Set) { applied = append(applied, set) })
	set := rulestest.Compile(t, "rules:\n- {name: a, resources: [configmaps], annotations: {a: '1'}}\n", rulestest.ConfigMaps)
	start := time.Now()
	apply(t.Context(), set)
	if len(applied) != 1 || time.Since(start) < time.Second {
		t.Errorf("applied %d sets after %v, want 1 after the settle time", len(applied), time.Since(start))
	}
	if got := names(t, client); len(got) != 2 {
		t.Errorf("cluster has %q, want a policy and a binding", got)
	}
	start = time.Now()
	apply(t.Context(), set)
	if len(applied) != 2 || time.Since(start) >= time.Second {
		t.Errorf("unchanged policies: applied after %v, want no wait", time.Since(start))
	}

	// A translation that fails (a bad field manager): the rules are
	// applied all the same, and Run keeps retrying.
	calls := 0
	s.opts.Translate = func(set *rules.Set) ([]admission.Policy, []admission.Note, error) {
		calls++
		return admission.Translate(set, admission.Options{FieldManager: "Bad:Manager"})
	}
	apply(t.Context(), set)
	if len(applied) != 3 {
		t.Errorf("the rules were not applied after a failed sync")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	s.opts.Interval = 10 * time.Millisecond
	s.Run(ctx)
	if calls < 3 {
		t.Errorf("Run tried %d times in 500ms, want retries every 10ms", calls)
	}
}

// On an API server without MutatingAdmissionPolicy v1 (Kubernetes 1.35),
// the sync says so once, leaves the rules to the controller, and tries
// again every Interval rather than every Retry; once the API is served
// (the cluster upgraded, its API server unavailable for a while), the
// policies are installed without a restart.
func TestNotServed(t *testing.T) {
	client := fake.NewClientset()
	var listErr error = apierrors.NewNotFound(schema.GroupResource{}, "")
	client.PrependReactor("list", "mutatingadmissionpolicies", func(clienttesting.Action) (bool, runtime.Object, error) {
		return listErr != nil, nil, listErr
	})
	s := New(Options{Client: client.AdmissionregistrationV1(), FieldManager: "kube-annotator", Translate: translate("kube-annotator"),
		Settle: time.Millisecond, Interval: time.Hour, Retry: time.Millisecond})
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx := klog.NewContext(t.Context(), logger)
	applied := 0
	apply := s.Wrap(func(context.Context, *rules.Set) { applied++ })
	set := rulestest.Compile(t, "rules:\n- {name: a, resources: [configmaps], annotations: {a: '1'}}\n", rulestest.ConfigMaps)
	apply(ctx, set)
	apply(ctx, set) // a reload
	if applied != 2 {
		t.Errorf("rules applied %d times, want 2: the controller enforces them without policies", applied)
	}
	if s.State() != NotServed {
		t.Errorf("State() = %v, want %v", s.State(), NotServed)
	}
	// Interval is an hour: Run does not retry within the test.
	runCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	s.Run(runCtx)
	cancel()
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	if n := strings.Count(logs, "Admission policies not installed"); n != 1 || !strings.Contains(logs, "Kubernetes 1.36 and later") {
		t.Errorf("said %d times that the policies are not installed, want once, naming the version that serves them:\n%s", n, logs)
	}
	if strings.Contains(logs, "ERROR") {
		t.Errorf("logged an error for a missing API:\n%s", logs)
	}

	listErr = apierrors.NewServiceUnavailable("upgrading")
	apply(ctx, set)
	if s.State() != Failed {
		t.Errorf("State() = %v while the API server is unavailable, want %v", s.State(), Failed)
	}
	listErr = nil
	s.opts.Interval = time.Millisecond
	runCtx, cancel = context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() { defer close(ran); s.Run(runCtx) }()
	testutil.WaitFor(t, 10*time.Second, "the policies synced once the API appeared", func() bool { return s.State() == Synced })
	cancel()
	<-ran
	if got := names(t, client); len(got) != 2 {
		t.Errorf("after the API appeared the cluster has %q, want a policy and a binding", got)
	}
	if logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String(); strings.Count(logs, "Admission policies now served") != 1 {
		t.Errorf("did not say the policies are installed now:\n%s", logs)
	}
}
