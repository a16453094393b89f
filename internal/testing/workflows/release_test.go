package workflows

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeRelease serves GitHub's release layout for imgctl/imgctl from a
// directory: /releases/latest redirects to /releases/tag/<latest>, and
// assets are under /releases/download/<tag>/.
type fakeRelease struct {
	dir, latest string
	srv         *httptest.Server
	mu          sync.Mutex
	requests    []string
}

const releasesPath = "/imgctl/imgctl/releases"

func newFakeRelease(t *testing.T, latest string) *fakeRelease {
	t.Helper()
	f := &fakeRelease{dir: t.TempDir(), latest: latest}
	mux := http.NewServeMux()
	mux.HandleFunc(releasesPath+"/latest", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, releasesPath+"/tag/"+f.latest, http.StatusFound)
	})
	mux.HandleFunc(releasesPath+"/tag/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "<html>a release page</html>")
	})
	mux.Handle("/", http.FileServer(http.Dir(f.dir)))
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.URL.Path)
		f.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// downloadURL is the IMGCTL_DOWNLOAD_URL that points install.sh here.
func (f *fakeRelease) downloadURL() string { return f.srv.URL + releasesPath + "/download" }

// count returns how often path was requested.
func (f *fakeRelease) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, p := range f.requests {
		if p == path {
			n++
		}
	}
	return n
}

// publish writes release tag: the assets and a checksums.txt in sha256sum
// format, in which the assets named in tamper get the checksum of other
// content.
func (f *fakeRelease) publish(t *testing.T, tag string, assets map[string][]byte, tamper ...string) {
	t.Helper()
	dir := filepath.Join(f.dir, filepath.FromSlash(releasesPath), "download", tag)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var sums strings.Builder
	for _, name := range slices.Sorted(maps.Keys(assets)) {
		content := assets[name]
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(tamper, name) {
			content = append(slices.Clone(content), '!')
		}
		sum := sha256.Sum256(content)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	if err := os.WriteFile(filepath.Join(dir, "checksums.txt"), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// archives are the release archives of the imgctl built from source,
// made once for all tests: a .tar.gz and a .zip, each holding the binary
// and README.md, as make release packs them.
var archives struct {
	once     sync.Once
	tgz, zip []byte
	err      error
}

// releaseArchives returns the .tar.gz (made by tar, whose gzip is much
// faster than compress/gzip under the race detector) and the .zip
// (archive/zip, stored) holding the imgctl built from source.
func releaseArchives(t *testing.T) (tgz, zipped []byte) {
	t.Helper()
	bin := sourceBinary(t)
	archives.once.Do(func() {
		dir, err := os.MkdirTemp("", "imgctl-archive-")
		if err != nil {
			archives.err = err
			return
		}
		defer os.RemoveAll(dir)
		readme := []byte("# imgctl\n")
		if err := os.WriteFile(filepath.Join(dir, "README.md"), readme, 0o644); err != nil {
			archives.err = err
			return
		}
		tarball := filepath.Join(dir, "imgctl.tar.gz")
		cmd := exec.Command("tar", "-czf", tarball, "-C", filepath.Dir(bin), "imgctl", "-C", dir, "README.md")
		if out, err := cmd.CombinedOutput(); err != nil {
			archives.err = fmt.Errorf("tar: %v\n%s", err, out)
			return
		}
		if archives.tgz, archives.err = os.ReadFile(tarball); archives.err != nil {
			return
		}
		content, err := os.ReadFile(bin)
		if err != nil {
			archives.err = err
			return
		}
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		for name, data := range map[string][]byte{"imgctl.exe": content, "README.md": readme} {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
			if err == nil {
				_, err = w.Write(data)
			}
			if err != nil {
				archives.err = err
				return
			}
		}
		if archives.err = zw.Close(); archives.err == nil {
			archives.zip = b.Bytes()
		}
	})
	if archives.err != nil {
		t.Fatal(archives.err)
	}
	return archives.tgz, archives.zip
}

// releaseOf publishes release tag of version with the archives make
// release produces (linux/amd64, linux/arm64, darwin/arm64,
// windows/amd64), each holding, as make release packs them, the binary
// and README.md; the binary is the imgctl built from source (this
// machine's, so that every installed one runs here).
func releaseOf(t *testing.T, f *fakeRelease, version string, tamper ...string) {
	t.Helper()
	tgz, zipped := releaseArchives(t)
	f.publish(t, "v"+version, map[string][]byte{
		"imgctl_" + version + "_linux_amd64.tar.gz":  tgz,
		"imgctl_" + version + "_linux_arm64.tar.gz":  tgz,
		"imgctl_" + version + "_darwin_arm64.tar.gz": tgz,
		"imgctl_" + version + "_windows_amd64.zip":   zipped,
	}, tamper...)
}

// TestInstallRelease: install.sh picks this runner's asset of the release
// (the latest, or the version asked for with or without its v), checks it
// against checksums.txt, and puts imgctl on GITHUB_PATH, where it runs.
func TestInstallRelease(t *testing.T) {
	f := newFakeRelease(t, "v1.2.3")
	releaseOf(t, f, "1.2.3")
	for _, tc := range []struct {
		os, arch, version, asset, exe string
	}{
		{"Linux", "X64", "latest", "imgctl_1.2.3_linux_amd64.tar.gz", "imgctl"},
		{"Linux", "ARM64", "v1.2.3", "imgctl_1.2.3_linux_arm64.tar.gz", "imgctl"},
		{"macOS", "ARM64", "1.2.3", "imgctl_1.2.3_darwin_arm64.tar.gz", "imgctl"},
		{"Windows", "X64", "latest", "imgctl_1.2.3_windows_amd64.zip", "imgctl.exe"},
	} {
		t.Run(tc.os+"/"+tc.arch+"/"+tc.version, func(t *testing.T) {
			r := newRunner(t, tc.os, tc.arch, "IMGCTL_DOWNLOAD_URL="+f.downloadURL(), "IMGCTL_VERSION="+tc.version)
			asset := releasesPath + "/download/v1.2.3/" + tc.asset
			before := f.count(asset)
			res := r.mustScript(t, "install.sh")
			if res.code != 0 {
				t.Fatalf("install.sh exit %d\nstdout: %s\nstderr: %s", res.code, res.stdout, res.stderr)
			}
			if got := f.count(asset) - before; got != 1 {
				t.Errorf("%s downloaded %d times, want once", tc.asset, got)
			}
			bin := filepath.Join(r.temp, "imgctl-bin")
			if got := r.pathDirs(t); !slices.Equal(got, []string{bin}) {
				t.Errorf("GITHUB_PATH = %q, want %q", got, bin)
			}
			if out := r.outputs(t); out["version"] != "1.2.3" || out["path"] != filepath.Join(bin, tc.exe) {
				t.Errorf("outputs = %v, want version=1.2.3 and path=%s", out, filepath.Join(bin, tc.exe))
			}
			r.runInstalled(t, tc.exe)

			// A second use of the action in the job downloads nothing.
			if res := r.mustScript(t, "install.sh"); res.code != 0 || !strings.Contains(res.stdout, "already installed") {
				t.Errorf("second install: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
			}
			if got := f.count(asset) - before; got != 1 {
				t.Errorf("after a second install %s was downloaded %d times, want once", tc.asset, got)
			}
		})
	}
}

// TestInstallReleaseFails: a download whose checksum does not match, a
// release without this runner's asset, a version that was never released
// and a runner imgctl has no release for all fail the step (non-zero exit)
// with a message that says which, and install nothing.
func TestInstallReleaseFails(t *testing.T) {
	f := newFakeRelease(t, "v6.6.6")
	releaseOf(t, f, "6.6.6", "imgctl_6.6.6_linux_amd64.tar.gz")
	for _, tc := range []struct {
		name, os, arch, version, want string
	}{
		{"checksum mismatch", "Linux", "X64", "latest",
			"checksum mismatch for imgctl_6.6.6_linux_amd64.tar.gz: checksums.txt says "},
		{"no asset for the platform", "Windows", "ARM64", "v6.6.6",
			"imgctl_6.6.6_windows_arm64.zip failed: release v6.6.6 has no asset for Windows/ARM64"},
		{"no such release", "Linux", "ARM64", "v0.0.1",
			"checksums.txt failed: is v0.0.1 a published release?"},
		{"no release for the architecture", "Linux", "X86", "latest",
			"no imgctl release for runner architecture X86"},
		{"not a version", "Linux", "X64", "../../v1.2.3",
			`version "../../v1.2.3" is not latest or a release version`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(t, tc.os, tc.arch, "IMGCTL_DOWNLOAD_URL="+f.downloadURL(), "IMGCTL_VERSION="+tc.version)
			res := r.mustScript(t, "install.sh")
			if res.code == 0 {
				t.Fatalf("install.sh succeeded, want a failure: %s", res.stdout)
			}
			if !strings.Contains(res.stderr, tc.want) {
				t.Errorf("stderr = %q, want it to say %q", res.stderr, tc.want)
			}
			if dirs := r.pathDirs(t); len(dirs) != 0 {
				t.Errorf("GITHUB_PATH = %q after a failed install", dirs)
			}
			if entries, _ := os.ReadDir(filepath.Join(r.temp, "imgctl-bin")); len(entries) != 0 {
				t.Errorf("a failed install left %v in imgctl-bin", entries)
			}
		})
	}
}
