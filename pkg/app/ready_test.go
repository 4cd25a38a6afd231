package app

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kube-annotator/kube-annotator/pkg/record"
	"github.com/kube-annotator/kube-annotator/pkg/server"
)

// /readyz fails, naming the record and the server's answer, while the
// record cannot be written, and is ok again once it can.
func TestReadyWhileTheRecordCannotBeWritten(t *testing.T) {
	client := fake.NewClientset()
	forbidden := true
	client.PrependReactor("create", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		if !forbidden {
			return false, nil, nil
		}
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", nil)
	})
	rec := record.New(client.CoreV1(), "ns", "m", "")
	names := Names{FieldManager: "--field-manager", RecordNamespace: "--record-namespace"}
	probes := server.Health(func() error { return recordWritable(rec, names) }, func() []string { return nil })
	readyz := func() (int, string) {
		w := httptest.NewRecorder()
		probes.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return w.Code, w.Body.String()
	}
	pods := schema.GroupResource{Resource: "pods"}

	if code, body := readyz(); code != http.StatusOK {
		t.Fatalf("/readyz before any write = %d %q, want 200", code, body)
	}
	if err := rec.Ensure(t.Context(), pods); err == nil {
		t.Fatal("Ensure() with create forbidden = nil, want an error")
	}
	code, body := readyz()
	for _, want := range []string{"cannot write the record", "ns/m-resources", "forbidden", "kube-annotator rbac", "--field-manager and --record-namespace name it"} {
		if code != http.StatusServiceUnavailable || !strings.Contains(body, want) {
			t.Errorf("/readyz while the record cannot be written = %d %q, want 503 with %q", code, body, want)
		}
	}
	forbidden = false
	if err := rec.Ensure(t.Context(), pods); err != nil {
		t.Fatalf("Ensure() once allowed = %v", err)
	}
	if code, body := readyz(); code != http.StatusOK {
		t.Errorf("/readyz once the record is written = %d %q, want 200", code, body)
	}
}
