package value

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"
)

// Template is a parsed JSONPath template. Executing one is not safe for
// concurrent use, hence the lock.
type Template struct {
	mu sync.Mutex
	jp *jsonpath.JSONPath
}

// Templates parses the JSONPath templates of from, by key.
func Templates(from map[string]string) (map[string]*Template, error) {
	if len(from) == 0 {
		return nil, nil
	}
	out := make(map[string]*Template, len(from))
	for k, tmpl := range from {
		jp := jsonpath.New(k)
		if err := jp.Parse(tmpl); err != nil {
			return nil, err
		}
		out[k] = &Template{jp: jp}
	}
	return out, nil
}

// values evaluates templates against obj. A template whose field is
// missing, or whose result is not a valid value, sets nothing; it is
// returned in missing.
func FromTemplates(from map[string]*Template, obj metav1.Object, valid func(string) []string) (map[string]string, []Missing) {
	if len(from) == 0 {
		return nil, nil
	}
	u, ok := obj.(runtime.Unstructured)
	if !ok {
		var miss []Missing
		for _, k := range slices.Sorted(maps.Keys(from)) {
			miss = append(miss, Missing{Key: k, Why: fmt.Sprintf("the cache holds only the metadata of %T; values cannot be read", obj), Reason: ReasonError, Value: ""})
		}
		return nil, miss
	}
	content := u.UnstructuredContent()
	var out map[string]string
	var miss []Missing
	for k, t := range from {
		var buf bytes.Buffer
		t.mu.Lock()
		err := t.jp.Execute(&buf, content)
		t.mu.Unlock()
		if err != nil {
			miss = append(miss, Missing{Key: k, Why: err.Error(), Reason: ReasonSourceMissing, Value: ""})
			continue
		}
		v := buf.String()
		if msgs := valid(v); len(msgs) > 0 {
			miss = append(miss, Missing{Key: k, Why: fmt.Sprintf("the value read (%d bytes) is not valid: %s", len(v), strings.Join(msgs, "; ")), Reason: ReasonInvalid, Value: v})
			continue
		}
		out = spec.Put(out, k, v)
	}
	return out, miss
}
