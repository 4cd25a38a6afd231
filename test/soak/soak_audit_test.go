package soak

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// soakAuditPolicy has kube-apiserver log every creation and PATCH of a
// ConfigMap or Frigate with the object it answered, whose resourceVersion
// tells a write that changed the object from one that changed nothing.
const soakAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: RequestResponse
  verbs: [create, patch]
  resources:
  - {group: "", resources: [configmaps]}
  - {group: ship.nwiizo.dev, resources: [frigates]}
- level: None
`

// soakAuditFlags writes the audit policy into dir and returns the
// kube-apiserver flags that log to dir/audit.log.
func soakAuditFlags(t *testing.T, dir string) (flags map[string]string, log string) {
	t.Helper()
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(soakAuditPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(dir, "audit.log")
	// Not rotated (at 100 MB by default): the soak reads it all.
	return map[string]string{"audit-policy-file": policy, "audit-log-path": log, "audit-log-format": "json", "audit-log-maxsize": "4096"}, log
}

// auditEvent is the part of a kube-apiserver audit event the soak reads.
type auditEvent struct {
	Stage            string
	Verb             string
	ImpersonatedUser *struct{ Username string }
	ObjectRef        struct{ Resource, Namespace, Name string }
	ResponseStatus   struct{ Code int }
	ResponseObject   struct {
		Metadata struct {
			ResourceVersion string
			Annotations     map[string]string
			Labels          map[string]string
		}
	}
	RequestReceivedTimestamp, StageTimestamp time.Time
}

// auditWrite is one write to an object, as the audit log tells it.
type auditWrite struct {
	controller         bool
	rv                 int64
	received, answered time.Time
	// gen is the generation of the rules whose extra annotations the
	// object carries after the write, -1 if none; converged that of the
	// rules whose every key it carries exactly, -1 if none.
	gen, converged int
}

// soakGen is the generation of the rules whose extra annotations
// annotations carry, or -1.
func soakGen(annotations map[string]string) int {
	for g := range 10 {
		if annotations[fmt.Sprintf("%sextra-%d", soakPrefix, g)] == "on" && annotations[fmt.Sprintf("%sextra-%d", soakPrefix, g+1)] == "on" {
			return g
		}
	}
	return -1
}

// patchAudit classifies the controller's PATCH requests that the API
// server applied (200).
type patchAudit struct {
	// applied are all of them; changed those that changed the object;
	// repeats those that changed nothing.
	applied, changed, repeats int
	// lostReplies are repeats that follow a PATCH of the same object that
	// was in flight when a connection cut began: the server applied it but
	// the controller never got the answer, so it had to write again.
	lostReplies int
	// late are changes to the rules of a generation older than the file's
	// when the request was received: written before the controller
	// switched to the new file, they need another write.
	late int
	// most names the objects the controller wrote most often.
	most []string
	// reloadWrites and cycledBehind are what soakNeeds counts.
	reloadWrites, cycledBehind int
}

// readPatchAudit reads the audit log at path, of the soak whose faults c
// made, user's PATCH requests being the controller's.
func readPatchAudit(t *testing.T, path, user string, c *chaos) patchAudit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byObject := map[string][]auditWrite{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit log %s: %v", path, err)
		}
		if e.Stage != "ResponseComplete" || e.ResponseStatus.Code/100 != 2 {
			continue
		}
		rv, err := strconv.ParseInt(e.ResponseObject.Metadata.ResourceVersion, 10, 64)
		if err != nil {
			t.Fatalf("audit log %s: %s of %s/%s answered resourceVersion %q", path, e.Verb, e.ObjectRef.Namespace, e.ObjectRef.Name, e.ResponseObject.Metadata.ResourceVersion)
		}
		key := e.ObjectRef.Resource + " " + e.ObjectRef.Namespace + "/" + e.ObjectRef.Name
		byObject[key] = append(byObject[key], auditWrite{
			controller: e.Verb == "patch" && e.ImpersonatedUser != nil && e.ImpersonatedUser.Username == user,
			rv:         rv, received: e.RequestReceivedTimestamp, answered: e.StageTimestamp,
			gen:       soakGen(e.ResponseObject.Metadata.Annotations),
			converged: convergedGen(e.ResponseObject.Metadata.Annotations, e.ResponseObject.Metadata.Labels),
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var a patchAudit
	type count struct {
		key string
		n   int
	}
	var counts []count
	for key, writes := range byObject {
		n := a.add(writes, c.cutAt, c.renamedAt)
		counts = append(counts, count{key, n})
	}
	a.reloadWrites, a.cycledBehind = soakNeeds(byObject, c.reloadLists, c.cycled, c.m.removedAt)
	slices.SortFunc(counts, func(x, y count) int { return y.n - x.n })
	for _, c := range counts[:min(5, len(counts))] {
		a.most = append(a.most, fmt.Sprintf("%s: %d", c.key, c.n))
	}
	return a
}

// add classifies the controller's writes among writes, all the writes to
// one object, and returns how many there were. A write that answered the
// resourceVersion the object already had changed nothing.
func (a *patchAudit) add(writes []auditWrite, cuts, renamed []time.Time) int {
	slices.SortStableFunc(writes, func(x, y auditWrite) int {
		if x.rv != y.rv {
			return int(x.rv - y.rv)
		}
		return x.answered.Compare(y.answered)
	})
	n := 0
	var prev int64
	var lastController *auditWrite
	for i := range writes {
		w := &writes[i]
		if w.controller {
			n++
			a.applied++
			switch {
			case w.rv != prev:
				a.changed++
				if w.gen >= 0 && w.gen < fileGen(w.received, renamed) {
					a.late++
				}
			default:
				a.repeats++
				if lastController != nil && inFlightAtCut(*lastController, cuts) {
					a.lostReplies++
				}
			}
			lastController = w
		}
		prev = w.rv
	}
	return n
}

// fileGen is the generation of the rules file at time at, renamed being
// when each generation after the first was put in place.
func fileGen(at time.Time, renamed []time.Time) int {
	g := 0
	for _, r := range renamed {
		if r.Before(at) {
			g++
		}
	}
	return g
}

// inFlightAtCut reports whether w was being served when a cut began: its
// answer may never have reached the controller. The answer leaves the
// server a little after it logs it, hence the margin.
func inFlightAtCut(w auditWrite, cuts []time.Time) bool {
	const margin = 50 * time.Millisecond
	for _, c := range cuts {
		if w.received.Before(c) && w.answered.Add(margin).After(c) {
			return true
		}
	}
	return false
}
