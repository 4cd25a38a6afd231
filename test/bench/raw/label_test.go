package raw

import "testing"

func TestParseLabel(t *testing.T) {
	for _, tc := range []struct {
		in, key, value string
		wantErr        bool
	}{
		{in: "team=c", key: "team", value: "c"},
		{in: "team=", key: "team", value: ""},
		{in: "example.com/team=a=b", key: "example.com/team", value: "a=b"},
		{in: "team", wantErr: true},
		{in: "=c", wantErr: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			key, value, err := ParseLabel(tc.in)
			if (err != nil) != tc.wantErr || key != tc.key || value != tc.value {
				t.Errorf("ParseLabel(%q) = %q, %q, %v", tc.in, key, value, err)
			}
		})
	}
	if got, want := string(labelPatch("team", "c")), `{"metadata":{"labels":{"team":"c"}}}`; got != want {
		t.Errorf("labelPatch = %s, want %s", got, want)
	}
}
