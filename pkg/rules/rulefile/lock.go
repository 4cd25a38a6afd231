package rulefile

import (
	"slices"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kube-annotator/kube-annotator/pkg/rules/spec"
	"github.com/kube-annotator/kube-annotator/pkg/rules/yamlfield"
)

// locked decodes a rule's locked: true (the default users and groups),
// false, or {users: [USER, …], groups: [GROUP, …]}, found at path p.
func (d *decoder) locked(v *yaml.Node, p string) *spec.Lock {
	if v.Kind == yaml.ScalarNode {
		if d.Boolean(v, p) {
			return &spec.Lock{Users: slices.Clone(spec.DefaultLockUsers), Groups: slices.Clone(spec.DefaultLockGroups)}
		}
		return nil
	}
	if v.Kind != yaml.MappingNode {
		d.Errorf(v, p, "must be true, false or {users: [USER, …], groups: [GROUP, …]}, got %s", yamlfield.Describe(v))
		return nil
	}
	l := &spec.Lock{}
	d.Fields(v, p, []string{"users", "groups"}, func(k, kp string, kv *yaml.Node) {
		names := d.UniqueList(kv, kp, k, "must name at least one; leave the field out for none", k[:len(k)-1], func(it *yaml.Node, ip, s string) bool {
			if s == "" {
				d.Errorf(it, ip, "must not be empty")
			}
			return s != ""
		})
		if k == "users" {
			l.Users = names
		} else {
			l.Groups = names
		}
	})
	if len(l.Users) == 0 && len(l.Groups) == 0 {
		d.Errorf(v, p, "must allow at least one user or group: the controller's own identity at least, or it cannot write the keys")
	}
	return l
}

// lockSchema is the JSON Schema of a rule's locked.
func lockSchema() *jsonSchema {
	names := &jsonSchema{Type: "array", MinItems: 1, UniqueItems: true, Items: &jsonSchema{Type: "string", MinLength: 1}}
	return &jsonSchema{AnyOf: []*jsonSchema{{Type: "boolean"}, {Type: "object", MinProperties: 1, AdditionalProperties: closed,
		Properties: map[string]*jsonSchema{"users": names, "groups": names}}}}
}
