package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// EtcdURL returns the client URL of the control plane's etcd, e.g.
// http://127.0.0.1:41234.
func (e *Env) EtcdURL() string {
	if e.env.ControlPlane.Etcd == nil || e.env.ControlPlane.Etcd.URL == nil {
		return ""
	}
	return e.env.ControlPlane.Etcd.URL.String()
}

// EtcdRevision returns etcd's current revision: the resourceVersion of
// the latest write to any object.
func (e *Env) EtcdRevision(ctx context.Context) (int64, error) {
	// Any key will do: every response carries the store's revision in its
	// header. "a" in base64, counted only.
	var out struct {
		Header struct {
			Revision revision `json:"revision"`
		} `json:"header"`
	}
	if err := e.etcdCall(ctx, "/v3/kv/range", map[string]any{"key": "YQ==", "count_only": true}, &out); err != nil {
		return 0, err
	}
	if out.Header.Revision == 0 {
		return 0, errors.New("etcd range: no revision in the response header")
	}
	return int64(out.Header.Revision), nil
}

// CompactEtcd discards etcd's history before rev and returns once the
// compaction is applied. A watch that resumes from an older
// resourceVersion then fails with 410 Gone — unless the API server's
// watch cache serves it (see Options.APIServerFlags, "watch-cache").
func (e *Env) CompactEtcd(ctx context.Context, rev int64) error {
	body := map[string]any{"revision": strconv.FormatInt(rev, 10), "physical": true}
	return e.etcdCall(ctx, "/v3/kv/compaction", body, nil)
}

// etcdCall posts req as JSON to etcd's gRPC gateway at path and decodes
// the response into out unless out is nil. The gateway saves the tests a
// dependency on etcd's Go client.
func (e *Env) etcdCall(ctx context.Context, path string, req, out any) error {
	base := e.EtcdURL()
	if base == "" {
		return errors.New("etcd client URL unknown: control plane not started")
	}
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	r.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", path, resp.Status, bytes.TrimSpace(body))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("etcd %s: decode %q: %w", path, body, err)
	}
	return nil
}

// revision is an int64 that the gateway encodes as a JSON string, as
// protobuf's JSON mapping does; a plain number is accepted too.
type revision int64

// UnmarshalJSON implements json.Unmarshaler.
func (r *revision) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("revision %s: %w", b, err)
	}
	*r = revision(n)
	return nil
}

// WatchTooOld is what kube-apiserver answers a watch that resumes from a
// resourceVersion etcd has compacted away (410 Gone, reason Expired).
const WatchTooOld = "The resourceVersion for the provided watch is too old"
