package reconcile

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

// requests formats requests for messages.
func requests(rs []patch.Request) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%s force=%v %s", r.Type, r.Force, r.Body))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// sent is one patch request as the API server received it.
type sent struct {
	namespace, name string
	typ             types.PatchType
	body            string
	manager         string
	force           bool
}

// observed is one call of an Observer.
type observed struct {
	gvr schema.GroupVersionResource
	err error
}

func TestSend(t *testing.T) {
	x := Ref{GVR: configMaps, Namespace: "ns", Name: "x"}
	apply := patch.Request{Type: types.ApplyPatchType, Force: true, Body: []byte(`{"apply":1}`)}
	del := patch.Request{Type: types.MergePatchType, Body: []byte(`{"metadata":{"annotations":{"old":null}}}`)}
	conflict := apierrors.NewConflict(configMaps.GroupResource(), "x", errors.New("changed"))
	notFound := apierrors.NewNotFound(configMaps.GroupResource(), "x")
	tests := []struct {
		name     string
		ref      Ref
		manager  string
		requests []patch.Request
		answers  []error // the server's answer to each request; nil: applied
		want     Result
		wantErr  error
		wantSent []sent
	}{
		{name: "one merge patch", ref: x, manager: FieldManager,
			requests: merge(`{"metadata":{"annotations":{"a":"1"}}}`), answers: []error{nil},
			want:     Result{ResourceVersion: "101"},
			wantSent: []sent{{"ns", "x", types.MergePatchType, `{"metadata":{"annotations":{"a":"1"}}}`, FieldManager, false}}},
		{name: "apply with force, then a merge patch; the last answer's resourceVersion", ref: x, manager: "custom",
			requests: []patch.Request{apply, del}, answers: []error{nil, nil},
			want: Result{ResourceVersion: "102"},
			wantSent: []sent{
				{"ns", "x", types.ApplyPatchType, `{"apply":1}`, "custom", true},
				{"ns", "x", types.MergePatchType, string(del.Body), "custom", false},
			}},
		{name: "cluster-scoped", ref: Ref{GVR: namespaces, Name: "team-a"}, manager: FieldManager,
			requests: []patch.Request{del}, answers: []error{nil},
			want:     Result{ResourceVersion: "101"},
			wantSent: []sent{{"", "team-a", types.MergePatchType, string(del.Body), FieldManager, false}}},
		{name: "deleted meanwhile: gone, not an error", ref: x, manager: FieldManager,
			requests: []patch.Request{apply, del}, answers: []error{notFound},
			want:     Result{Gone: true},
			wantSent: []sent{{"ns", "x", types.ApplyPatchType, `{"apply":1}`, FieldManager, true}}},
		{name: "the first error stops", ref: x, manager: FieldManager,
			requests: []patch.Request{apply, del}, answers: []error{conflict}, wantErr: conflict,
			wantSent: []sent{{"ns", "x", types.ApplyPatchType, `{"apply":1}`, FieldManager, true}}},
		{name: "an error after a write", ref: x, manager: FieldManager,
			requests: []patch.Request{apply, del}, answers: []error{nil, conflict}, wantErr: conflict,
			want: Result{ResourceVersion: "101"},
			wantSent: []sent{
				{"ns", "x", types.ApplyPatchType, `{"apply":1}`, FieldManager, true},
				{"ns", "x", types.MergePatchType, string(del.Body), FieldManager, false},
			}},
		{name: "nothing to send", ref: x, manager: FieldManager},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			client := &metadataServer{answer: func() (*metav1.PartialObjectMetadata, error) {
				err := tc.answers[n]
				n++
				if err != nil {
					return nil, err
				}
				return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: fmt.Sprint(100 + n)}}, nil
			}}
			var seen []observed
			w := NewWriter(client, tc.manager, nil, func(gvr schema.GroupVersionResource, err error) { seen = append(seen, observed{gvr, err}) })

			got, err := w.Send(t.Context(), tc.ref, tc.requests)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("Send() error = %v, want %v", err, tc.wantErr)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "patch "+tc.ref.String()+": ") {
				t.Errorf("Send() error = %q, want it to name %s", err, tc.ref)
			}
			if err != nil && !apierrors.IsConflict(err) {
				t.Errorf("Send() error %v cannot be classified", err)
			}
			if got != tc.want {
				t.Errorf("Send() = %+v, want %+v", got, tc.want)
			}
			var gotSent []sent
			for _, p := range client.patches {
				if p.gvr != tc.ref.GVR {
					t.Errorf("patch of %v, want %v", p.gvr, tc.ref.GVR)
				}
				gotSent = append(gotSent, p.sent)
			}
			if !reflect.DeepEqual(gotSent, tc.wantSent) {
				t.Errorf("sent %+v, want %+v", gotSent, tc.wantSent)
			}
			var wantSeen []observed
			for _, err := range tc.answers[:len(tc.wantSent)] {
				wantSeen = append(wantSeen, observed{tc.ref.GVR, err})
			}
			if !reflect.DeepEqual(seen, wantSeen) {
				t.Errorf("observed %v, want %v", seen, wantSeen)
			}
		})
	}
}

// A Writer without an Observer sends all the same.
func TestSendWithoutObserver(t *testing.T) {
	client := &metadataServer{answer: func() (*metav1.PartialObjectMetadata, error) {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9"}}, nil
	}}
	got, err := NewWriter(client, FieldManager, nil, nil).Send(t.Context(), Ref{GVR: configMaps, Namespace: "ns", Name: "x"},
		merge(`{"metadata":{"annotations":{"a":"1"}}}`))
	if err != nil || got.ResourceVersion != "9" || len(client.patches) != 1 {
		t.Errorf("Send() = %+v, %v after %d requests; want resourceVersion 9 after 1", got, err, len(client.patches))
	}
}

// metadataServer is a metadata client that records the patches it is
// sent and answers each with answer. It serves nothing else.
type metadataServer struct {
	answer  func() (*metav1.PartialObjectMetadata, error)
	patches []patchSent
}

// patchSent is one patch request, of one resource.
type patchSent struct {
	gvr schema.GroupVersionResource
	sent
}

func (m *metadataServer) Resource(gvr schema.GroupVersionResource) metadata.Getter {
	return metadataResource{server: m, gvr: gvr}
}

type metadataResource struct {
	metadata.ResourceInterface // nil: only Patch is served
	server                     *metadataServer
	gvr                        schema.GroupVersionResource
	namespace                  string
}

func (r metadataResource) Namespace(ns string) metadata.ResourceInterface {
	r.namespace = ns
	return r
}

func (r metadataResource) Patch(_ context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, _ ...string) (*metav1.PartialObjectMetadata, error) {
	r.server.patches = append(r.server.patches, patchSent{r.gvr, sent{r.namespace, name, pt, string(data), opts.FieldManager, opts.Force != nil && *opts.Force}})
	return r.server.answer()
}

func TestRefString(t *testing.T) {
	for _, tc := range []struct {
		ref  Ref
		want string
	}{
		{Ref{GVR: configMaps, Namespace: "ns", Name: "x"}, "configmaps.v1 ns/x"},
		{Ref{GVR: namespaces, Name: "team-a"}, "namespaces.v1 team-a"},
		{Ref{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespace: "ns", Name: "web"}, "deployments.v1.apps ns/web"},
	} {
		if got := tc.ref.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

// ledger records what it was asked to record; err, when set, is its
// answer.
type ledger struct {
	ensured []schema.GroupResource
	err     error
}

func (l *ledger) Ensure(_ context.Context, gr schema.GroupResource) error {
	l.ensured = append(l.ensured, gr)
	return l.err
}

// The resource is recorded before the first request; if it cannot be,
// nothing is sent, and the error is not the ledger's to classify.
func TestSendRecordsFirst(t *testing.T) {
	x := Ref{GVR: configMaps, Namespace: "ns", Name: "x"}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "kube-annotator-resources", errors.New("RBAC"))
	tests := []struct {
		name         string
		requests     []patch.Request
		ledgerErr    error
		wantEnsured  int
		wantSent     int
		wantErrorMsg string
	}{
		{name: "recorded, then sent", requests: merge(`{"metadata":{"annotations":{"a":"1"}}}`), wantEnsured: 1, wantSent: 1},
		{name: "nothing to send: nothing recorded"},
		{name: "not recorded: not sent", requests: merge(`{"metadata":{"annotations":{"a":"1"}}}`), ledgerErr: forbidden,
			wantEnsured: 1, wantErrorMsg: "patch configmaps.v1 ns/x: not sent: its resource is not recorded: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &ledger{err: tc.ledgerErr}
			client := &metadataServer{answer: func() (*metav1.PartialObjectMetadata, error) {
				if len(l.ensured) == 0 {
					t.Errorf("patch sent before the resource was recorded")
				}
				return &metav1.PartialObjectMetadata{}, nil
			}}
			_, err := NewWriter(client, FieldManager, l, nil).Send(t.Context(), x, tc.requests)
			if len(l.ensured) != tc.wantEnsured || len(client.patches) != tc.wantSent {
				t.Errorf("recorded %v, sent %d requests; want %d and %d", l.ensured, len(client.patches), tc.wantEnsured, tc.wantSent)
			}
			for _, gr := range l.ensured {
				if gr != configMaps.GroupResource() {
					t.Errorf("recorded %v, want %v", gr, configMaps.GroupResource())
				}
			}
			switch {
			case tc.wantErrorMsg == "" && err != nil:
				t.Errorf("Send() = %v", err)
			case tc.wantErrorMsg != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErrorMsg) || apierrors.IsForbidden(err)):
				t.Errorf("Send() = %v, want an error starting %q that is not classified as the ledger's", err, tc.wantErrorMsg)
			}
		})
	}
}
