package harness

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// ReleaseDist returns dist/ when it holds a release (make release writes
// checksums.txt last) whose files match their checksums. Without one the
// test is skipped, and fails under CI=true: .ci/run builds the release
// before the tests, and the tests install from it.
func ReleaseDist(t testing.TB) string {
	t.Helper()
	dist := filepath.Join(RepoRoot(), "dist")
	sums, err := os.ReadFile(filepath.Join(dist, "checksums.txt"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no release in dist/ (%v): CI builds one with `make release` before the tests", err)
		}
		t.Skipf("no release in dist/ (%v): run `make release VERSION=vX.Y.Z` first", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(sums)))
	n := 0
	for ; sc.Scan(); n++ {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("dist/checksums.txt: line %d: %q: want SHA256  NAME", n+1, sc.Text())
		}
		data, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatalf("dist/checksums.txt: line %d: %v", n+1, err)
		}
		if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
			t.Fatalf("dist/%s: sha256 %x, checksums.txt says %s", name, got, sum)
		}
	}
	if n == 0 {
		t.Fatal("dist/checksums.txt lists no file")
	}
	return dist
}

// ReleasedBinary extracts kubectl-annotator from the release's plugin
// archive for this platform and checks that it says it is version.
func ReleasedBinary(t testing.TB, dist, version string) string {
	t.Helper()
	archive := filepath.Join(dist, "kubectl-annotator_"+runtime.GOOS+"_"+runtime.GOARCH+".tar.gz")
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", archive, err)
	}
	tr := tar.NewReader(gz)
	bin := filepath.Join(t.TempDir(), "kubectl-annotator")
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			t.Fatalf("%s holds no kubectl-annotator", archive)
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		if hdr.Name != "kubectl-annotator" {
			continue
		}
		out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, tr); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		break
	}
	data, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("%s version: %v", bin, err)
	}
	var v struct{ Version string }
	if err := json.Unmarshal(data, &v); err != nil || v.Version != version {
		t.Fatalf("%s version -o json = %s (%v), want version %s", bin, data, err, version)
	}
	return bin
}
