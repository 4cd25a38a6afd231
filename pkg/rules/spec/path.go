package spec

import ()

// FieldPath is the path of key in the mapping at path.
func FieldPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
