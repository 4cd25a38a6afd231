package patch_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kube-annotator/kube-annotator/pkg/patch"
)

func TestAnnotations(t *testing.T) {
	tests := []struct {
		name    string
		current map[string]any
		desired map[string]string
		want    map[string]string
	}{
		{"nil current", nil, map[string]string{"a": "1"}, map[string]string{"a": "1"}},
		{"missing key", map[string]any{"other": "x"}, map[string]string{"a": "1"}, map[string]string{"a": "1"}},
		{"same value", map[string]any{"a": "1", "other": "x"}, map[string]string{"a": "1"}, nil},
		{"different value", map[string]any{"a": "2"}, map[string]string{"a": "1"}, map[string]string{"a": "1"}},
		{"empty value wanted, key missing", map[string]any{}, map[string]string{"a": ""}, map[string]string{"a": ""}},
		{"empty value wanted and present", map[string]any{"a": ""}, map[string]string{"a": ""}, nil},
		{"values compare exactly", map[string]any{"a": "true"}, map[string]string{"a": "True"}, map[string]string{"a": "True"}},
		{"non-string values in current",
			map[string]any{"b": true, "n": 1.0, "z": nil, "l": []any{"1"}},
			map[string]string{"b": "true", "n": "1", "z": "", "l": "1"},
			map[string]string{"b": "true", "n": "1", "z": "", "l": "1"}},
		{"several keys partly satisfied",
			map[string]any{"a": "1", "b": "old", "other": "x"},
			map[string]string{"a": "1", "b": "2", "c": "3"},
			map[string]string{"b": "2", "c": "3"}},
		{"empty desired", map[string]any{"a": "1"}, map[string]string{}, nil},
		{"nil desired and current", nil, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := deepCopy(t, tc.current)
			got := patch.Annotations(tc.current, tc.desired)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Annotations = %#v, want %#v", got, tc.want)
			}
			if !reflect.DeepEqual(tc.current, before) {
				t.Errorf("Annotations modified current: %#v, was %#v", tc.current, before)
			}
		})
	}
}

func deepCopy(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	if m == nil {
		return nil
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMergePatch(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        string
	}{
		{"one key", map[string]string{"sample-controller": "True"},
			`{"metadata":{"annotations":{"sample-controller":"True"}}}`},
		{"keys sorted", map[string]string{"z": "1", "example.com/team": "web", "a": "2", "B": "3"},
			`{"metadata":{"annotations":{"B":"3","a":"2","example.com/team":"web","z":"1"}}}`},
		{"empty value", map[string]string{"a": ""}, `{"metadata":{"annotations":{"a":""}}}`},
		{"quotes and backslashes", map[string]string{"a": `say "hi" \o/`},
			`{"metadata":{"annotations":{"a":"say \"hi\" \\o/"}}}`},
		{"control characters", map[string]string{"a": "line1\nline2\ttab\x01"},
			`{"metadata":{"annotations":{"a":"line1\nline2\ttab\u0001"}}}`},
		{"unicode", map[string]string{"a": "日本語 ✓ 🚢"},
			`{"metadata":{"annotations":{"a":"日本語 ✓ 🚢"}}}`},
		{"HTML and line separators escaped", map[string]string{"a": "<b>&\u2028"},
			`{"metadata":{"annotations":{"a":"\u003cb\u003e\u0026\u2028"}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := patch.MergePatch(tc.annotations)
			if err != nil {
				t.Fatalf("MergePatch: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("MergePatch =\n%s\nwant\n%s", got, tc.want)
			}
			var decoded struct {
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(got, &decoded); err != nil {
				t.Fatalf("patch is not JSON: %v", err)
			}
			if !reflect.DeepEqual(decoded.Metadata.Annotations, tc.annotations) {
				t.Errorf("round trip = %#v, want %#v", decoded.Metadata.Annotations, tc.annotations)
			}
		})
	}
}

// TestPatchLeavesOtherAnnotations applies the patch the way the API server
// applies a JSON merge patch (RFC 7386) and checks that only the desired
// keys change.
// An empty merge patch would be {"annotations": null}, which deletes every
// annotation; MergePatch refuses it.
func TestMergePatchRefusesEmpty(t *testing.T) {
	for _, in := range []map[string]string{nil, {}} {
		if got, err := patch.MergePatch(in); err == nil {
			t.Errorf("MergePatch(%#v) = %s, want an error", in, got)
		}
	}
}

func TestPatchLeavesOtherAnnotations(t *testing.T) {
	tests := []struct {
		name    string
		object  string
		desired map[string]string
		want    string
	}{
		{"adds to existing annotations",
			`{"metadata":{"name":"x","annotations":{"other":"keep","a":"old"}},"spec":{"n":1}}`,
			map[string]string{"a": "new", "b": "2"},
			`{"metadata":{"annotations":{"a":"new","b":"2","other":"keep"},"name":"x"},"spec":{"n":1}}`},
		{"object without annotations",
			`{"metadata":{"name":"x"}}`,
			map[string]string{"a": `"quoted" ✓`},
			`{"metadata":{"annotations":{"a":"\"quoted\" ✓"},"name":"x"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var obj map[string]any
			if err := json.Unmarshal([]byte(tc.object), &obj); err != nil {
				t.Fatal(err)
			}
			data, err := patch.MergePatch(patch.Annotations(annotationsOf(obj), tc.desired))
			if err != nil {
				t.Fatalf("MergePatch: %v", err)
			}
			var p any
			if err := json.Unmarshal(data, &p); err != nil {
				t.Fatalf("patch is not JSON: %v", err)
			}
			patched := mergePatch(obj, p).(map[string]any)
			var want any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(patched, want) {
				t.Errorf("patched object =\n%v\nwant\n%v", patched, want)
			}
			if again := patch.Annotations(annotationsOf(patched), tc.desired); again != nil {
				t.Errorf("after the patch, Annotations = %v, want nil", again)
			}
		})
	}
}

func annotationsOf(obj map[string]any) map[string]any {
	metadata, _ := obj["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	return annotations
}

// mergePatch is RFC 7386's MergePatch(target, patch).
func mergePatch(target, p any) any {
	pm, ok := p.(map[string]any)
	if !ok {
		return p
	}
	tm, ok := target.(map[string]any)
	out := map[string]any{}
	if ok {
		for k, v := range tm {
			out[k] = v
		}
	}
	for k, v := range pm {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = mergePatch(out[k], v)
	}
	return out
}
