package kubelet

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// ConfigMapVolume is a directory laid out as the kubelet lays out a
// ConfigMap volume (its AtomicWriter): each key is a symlink
// "<key> -> ..data/<key>", "..data" is a symlink to a timestamped
// directory that holds the files, and an update swaps "..data" in one
// rename.
type ConfigMapVolume struct {
	// Dir is the volume's directory, where a container mounts it.
	Dir string

	t    testing.TB
	keys map[string]bool // the keys whose symlinks are in Dir
}

// NewConfigMapVolume writes files (key → content) into dir as a ConfigMap
// volume.
func NewConfigMapVolume(t testing.TB, dir string, files map[string]string) *ConfigMapVolume {
	t.Helper()
	v := &ConfigMapVolume{Dir: dir, t: t, keys: map[string]bool{}}
	v.Update(files)
	return v
}

// Update replaces the volume's files as the kubelet does when the
// ConfigMap changes: it writes them into a new timestamped directory,
// points "..data_tmp" at it, renames "..data_tmp" over "..data", adds the
// symlinks of new keys, removes those of keys gone, and removes the
// previous timestamped directory.
func (v *ConfigMapVolume) Update(files map[string]string) {
	t := v.t
	t.Helper()
	data, dataTmp := filepath.Join(v.Dir, "..data"), filepath.Join(v.Dir, "..data_tmp")
	old, err := os.Readlink(data)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	tsDir, err := os.MkdirTemp(v.Dir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for key, content := range files {
		if err := os.WriteFile(filepath.Join(tsDir, key), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Base(tsDir), dataTmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dataTmp, data); err != nil {
		t.Fatal(err)
	}
	for key := range files {
		if !v.keys[key] {
			if err := os.Symlink(filepath.Join("..data", key), filepath.Join(v.Dir, key)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for key := range v.keys {
		if _, ok := files[key]; !ok {
			if err := os.Remove(filepath.Join(v.Dir, key)); err != nil {
				t.Fatal(err)
			}
			delete(v.keys, key)
		}
	}
	for key := range files {
		v.keys[key] = true
	}
	if old != "" {
		if err := os.RemoveAll(filepath.Join(v.Dir, old)); err != nil {
			t.Fatal(err)
		}
	}
}
