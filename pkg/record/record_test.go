package record

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kube-annotator/kube-annotator/pkg/rules/rulefile"
)

var (
	deployments = schema.GroupResource{Group: "apps", Resource: "deployments"}
	pods        = schema.GroupResource{Resource: "pods"}
)

// stored returns a record ConfigMap as the cluster would hold it.
func stored(manager, resources string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: Name(manager), Namespace: "ns", ResourceVersion: "5",
			Labels: map[string]string{ManagedByLabel: ManagedBy}},
		Data: map[string]string{FieldManagerKey: manager, ResourcesKey: resources},
	}
}

// resources returns the resources key of the record in client, or
// "(none)" when there is no record.
func resources(t *testing.T, client *fake.Clientset) string {
	t.Helper()
	cm, err := client.CoreV1().ConfigMaps("ns").Get(context.Background(), Name("m"), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "(none)"
	}
	if err != nil {
		t.Fatal(err)
	}
	if cm.Labels[ManagedByLabel] != ManagedBy || cm.Data[FieldManagerKey] != "m" {
		t.Errorf("record labels %v, data %v: want it labelled and naming its field manager", cm.Labels, cm.Data)
	}
	if cm.ResourceVersion == "" && cm.Annotations[rulefile.IgnoreAnnotation] != "true" { // created by the test
		t.Errorf("record annotations %v: want it opted out of every rule", cm.Annotations)
	}
	return cm.Data[ResourcesKey]
}

// writes counts the create and update requests client received.
func writes(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "create" || a.GetVerb() == "update" {
			n++
		}
	}
	return n
}

func TestValidateFieldManager(t *testing.T) {
	tests := []struct {
		manager, wantErr string
	}{
		{manager: "kube-annotator"},
		{manager: "team-a.example"},
		{manager: "", wantErr: "must not be empty"},
		{manager: Writer, wantErr: `"kube-annotator-record" is the field manager records are written as`},
		{manager: StatusWriter, wantErr: `"kube-annotator-tenant-status" is the field manager tenants' status annotations are written as`},
		{manager: strings.Repeat("a", 129), wantErr: "128"},
		{manager: "a\tb", wantErr: "invalid character U+0009"},
		{manager: "Team_A", wantErr: `"Team_A" would name the record ConfigMap "Team_A-resources", which is not a valid name`},
	}
	for _, tc := range tests {
		t.Run(tc.manager, func(t *testing.T) {
			err := ValidateFieldManager(tc.manager)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("ValidateFieldManager(%q) = %v, want error containing %q", tc.manager, err, tc.wantErr)
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, text string
		want       []Entry
		wantErr    string
	}{
		{name: "empty"},
		{name: "lines", text: "deployments.apps\n\npods -n team-a\n  pods  \n",
			want: []Entry{{deployments, ""}, {pods, "team-a"}, {pods, ""}}},
		{name: "dotted group", text: "frigates.ship.nwiizo.dev\n",
			want: []Entry{{schema.GroupResource{Group: "ship.nwiizo.dev", Resource: "frigates"}, ""}}},
		{name: "missing namespace", text: "pods\npods -n\n", wantErr: `line 2: "pods -n"`},
		{name: "bad namespace", text: "pods -n Team_A\n", wantErr: `line 1: "pods -n Team_A"`},
		{name: "two resources", text: "pods deployments\n", wantErr: `line 1: "pods deployments": want RESOURCE[.GROUP]`},
		{name: "no resource", text: ".apps\n", wantErr: `line 1: ".apps": no resource`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse(tc.text)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parse() = %v, %v; want error containing %q", got, err, tc.wantErr)
				}
				return
			}
			want := map[Entry]bool{}
			for _, e := range tc.want {
				want[e] = true
			}
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("parse() = %v, %v; want %v", got, err, want)
			}
		})
	}
}

// Ensure writes only what is not recorded yet, Remove only what the
// scope pruned, and Recorded lists what the scope prunes.
func TestEnsureRemoveRecorded(t *testing.T) {
	const others = "configmaps -n b\ndeployments.apps -n b\npods\n"
	tests := []struct {
		name, scope   string
		ensure        []schema.GroupResource
		remove        schema.GroupResource
		wantRecorded  []schema.GroupResource
		wantResources string
		wantWrites    int
	}{
		{name: "every namespace", ensure: []schema.GroupResource{deployments, deployments, pods},
			wantRecorded:  []schema.GroupResource{{Resource: "configmaps"}, deployments, pods},
			remove:        deployments,
			wantResources: "configmaps -n b\npods\n", wantWrites: 2},
		{name: "one namespace", scope: "a", ensure: []schema.GroupResource{deployments, pods, pods},
			wantRecorded:  []schema.GroupResource{deployments, pods},
			remove:        deployments,
			wantResources: "configmaps -n b\ndeployments.apps -n b\npods\npods -n a\n", wantWrites: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(stored("m", others))
			r := New(client.CoreV1(), "ns", "m", tc.scope)
			if err := r.Load(t.Context()); err != nil {
				t.Fatal(err)
			}
			for _, gr := range tc.ensure {
				if err := r.Ensure(t.Context(), gr); err != nil {
					t.Fatalf("Ensure(%v) = %v", gr, err)
				}
			}
			if got := r.Recorded(); !reflect.DeepEqual(got, tc.wantRecorded) {
				t.Errorf("Recorded() = %v, want %v", got, tc.wantRecorded)
			}
			if err := r.Remove(t.Context(), tc.remove); err != nil {
				t.Fatalf("Remove() = %v", err)
			}
			if got := resources(t, client); got != tc.wantResources {
				t.Errorf("record:\n%s\nwant:\n%s", got, tc.wantResources)
			}
			if got := writes(client); got != tc.wantWrites {
				t.Errorf("%d writes, want %d", got, tc.wantWrites)
			}
		})
	}
}

func TestEnsureCreatesTheRecord(t *testing.T) {
	client := fake.NewClientset()
	r := New(client.CoreV1(), "ns", "m", "")
	if err := r.Load(t.Context()); err != nil || len(r.Recorded()) != 0 {
		t.Fatalf("Load() of no record = %v, Recorded() %v; want nil and none", err, r.Recorded())
	}
	if err := r.Remove(t.Context(), pods); err != nil || writes(client) != 0 {
		t.Fatalf("Remove() from no record = %v after %d writes; want nil and no write", err, writes(client))
	}
	for _, gr := range []schema.GroupResource{pods, deployments} {
		if err := r.Ensure(t.Context(), gr); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := resources(t, client), "deployments.apps\npods\n"; got != want {
		t.Errorf("record:\n%s\nwant:\n%s", got, want)
	}
	// Written as Writer, not as the field manager the record belongs to,
	// whose controller would prune the label it owned.
	for _, a := range client.Actions() {
		var manager string
		switch a := a.(type) {
		case k8stesting.CreateActionImpl:
			manager = a.CreateOptions.FieldManager
		case k8stesting.UpdateActionImpl:
			manager = a.UpdateOptions.FieldManager
		default:
			continue
		}
		if manager != Writer {
			t.Errorf("%s as field manager %q, want %q", a.GetVerb(), manager, Writer)
		}
	}
}

// A write that fails records nothing: the next Ensure tries again. One
// that conflicts with another writer is retried on the record as it is.
func TestEnsureErrors(t *testing.T) {
	client := fake.NewClientset(stored("m", "pods\n"))
	r := New(client.CoreV1(), "ns", "m", "")
	fail := []error{
		apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, Name("m"), nil),
		apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, Name("m"), nil),
	}
	client.PrependReactor("update", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		if len(fail) == 0 {
			return false, nil, nil
		}
		err := fail[0]
		fail = fail[1:]
		return true, nil, err
	})
	if err := r.Ensure(t.Context(), deployments); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "record ns/m-resources") {
		t.Fatalf("Ensure() = %v, want the Forbidden error naming the record", err)
	}
	if got := resources(t, client); got != "pods\n" {
		t.Fatalf("record after a failed write: %q", got)
	}
	if err := r.Ensure(t.Context(), deployments); err != nil {
		t.Fatalf("Ensure() after a conflict = %v, want it retried", err)
	}
	if got, want := resources(t, client), "deployments.apps\npods\n"; got != want {
		t.Errorf("record:\n%s\nwant:\n%s", got, want)
	}
}

// A ConfigMap that is not this field manager's record is never used.
func TestLoadRefuses(t *testing.T) {
	unlabelled := stored("m", "")
	unlabelled.Labels = nil
	tests := []struct {
		name    string
		cm      *corev1.ConfigMap
		wantErr string
	}{
		{"not a record", unlabelled, "record ns/m-resources: the ConfigMap exists but is not a record (it lacks the label app.kubernetes.io/managed-by=kube-annotator)"},
		{"another field manager", func() *corev1.ConfigMap { cm := stored("m", ""); cm.Data[FieldManagerKey] = "other"; return cm }(),
			`record ns/m-resources: data.fieldManager is "other", not "m": refusing to use another field manager's record`},
		{"bad line", stored("m", "pods\npods deployments\n"), `record ns/m-resources: data.resources: line 2: "pods deployments"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(tc.cm)
			r := New(client.CoreV1(), "ns", "m", "")
			if err := r.Load(t.Context()); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Load() = %v, want error containing %q", err, tc.wantErr)
			}
			if err := r.Load(t.Context()); errors.Is(err, ErrNotRecord) != (tc.name == "not a record") {
				t.Errorf("Load() = %v: matches ErrNotRecord %v", err, errors.Is(err, ErrNotRecord))
			}
			if err := r.Ensure(t.Context(), pods); err == nil || writes(client) != 0 {
				t.Errorf("Ensure() = %v after %d writes, want an error and no write", err, writes(client))
			}
		})
	}
}

// WriteError holds the error of the last attempt to change the record
// until one succeeds, and Observe is told every outcome.
func TestWriteError(t *testing.T) {
	client := fake.NewClientset()
	r := New(client.CoreV1(), "ns", "m", "")
	var observed []error
	r.Observe(func(err error) { observed = append(observed, err) })
	forbidden := true
	client.PrependReactor("create", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		if !forbidden {
			return false, nil, nil
		}
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", nil)
	})
	if err := r.WriteError(); err != nil {
		t.Fatalf("WriteError() before any write = %v, want nil", err)
	}
	for range 2 {
		if err := r.Ensure(t.Context(), pods); !apierrors.IsForbidden(err) {
			t.Fatalf("Ensure() = %v, want Forbidden", err)
		}
		if err := r.WriteError(); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "record ns/m-resources") {
			t.Fatalf("WriteError() after a forbidden create = %v, want the Forbidden error naming the record", err)
		}
	}
	forbidden = false
	if err := r.Ensure(t.Context(), pods); err != nil {
		t.Fatalf("Ensure() once allowed = %v", err)
	}
	if err := r.WriteError(); err != nil {
		t.Errorf("WriteError() after a write succeeded = %v, want nil", err)
	}
	if len(observed) != 3 || !apierrors.IsForbidden(observed[0]) || !apierrors.IsForbidden(observed[1]) || observed[2] != nil {
		t.Errorf("observed %v, want Forbidden, Forbidden, nil", observed)
	}
	if err := r.Ensure(t.Context(), pods); err != nil || len(observed) != 3 {
		t.Errorf("Ensure() of a recorded resource = %v, observed %d outcomes; want nil and no attempt", err, len(observed))
	}
}
