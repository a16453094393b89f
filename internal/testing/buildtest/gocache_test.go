package buildtest

import (
	"archive/tar"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGolangImageCompilesNothing unpacks GolangImage onto the host and runs
// its go command as the build container does (its GOROOT, its GOCACHE and
// environment, examples/hello's Dockerfile flags) for every target: the
// cache layer must answer every compile, so `go build -x` runs the
// compiler for no package, standard library or main.
func TestGolangImageCompilesNothing(t *testing.T) {
	SkipShort(t, NeedsBusybox)
	img, err := GolangImage()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		forEachEntry(t, l, func(h *tar.Header, r io.Reader) {
			if !strings.HasPrefix(h.Name, "usr/local/go") && !strings.HasPrefix(h.Name, containerGOCACHE) {
				return
			}
			p := filepath.Join(root, filepath.FromSlash(h.Name))
			switch h.Typeflag {
			case tar.TypeDir:
				err = os.MkdirAll(p, 0o755)
			case tar.TypeReg:
				err = writeFile(p, r, os.FileMode(h.Mode))
			case tar.TypeSymlink:
				err = os.Symlink(h.Linkname, p)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	modRoot, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(modRoot, "examples", "hello")
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	goBin := filepath.Join(root, "usr", "local", "go", "bin", "go")
	for _, tg := range goCacheTargets {
		cmd := exec.Command(goBin, "build", "-x", "-trimpath", "-ldflags", "-s -w -X main.version=test", "-o", os.DevNull, ".")
		cmd.Dir = src
		cmd.Env = []string{"CGO_ENABLED=0", "GOOS=" + tg.os, "GOARCH=" + tg.arch}
		for _, kv := range cf.Config.Env {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "PATH":
				v = filepath.Dir(goBin) + ":" + os.Getenv("PATH")
			case "GOCACHE", "HOME":
				v = filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(v, "/")))
			}
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s/%s: %v\n%s", tg.os, tg.arch, err, out)
		}
		if n := strings.Count(string(out), "/compile -o"); n != 0 {
			t.Errorf("%s/%s: the build container's go build would compile %d package(s):\n%s", tg.os, tg.arch, n, tail(string(out), 40))
		}
	}
}

func writeFile(p string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestSeedGoCache: seeding an empty build cache from the machine's for
// examples/hello leaves the go command nothing to compile in it, standard
// library or main, and a second seed copies nothing more.
func TestSeedGoCache(t *testing.T) {
	modRoot, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(modRoot, "examples", "hello")
	machine, err := machineGoCache()
	if err != nil {
		t.Fatal(err)
	}
	env := goCacheTargetEnv("linux", "amd64")
	seeded := t.TempDir()
	if err := seedGoCache(seeded, machine, src, env); err != nil {
		t.Fatal(err)
	}
	files := func() int {
		n := 0
		_ = filepath.WalkDir(seeded, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				n++
			}
			return err
		})
		return n
	}
	n := files()
	if n == 0 {
		t.Fatalf("seeding from %s copied nothing", machine)
	}
	if err := seedGoCache(seeded, machine, src, env); err != nil {
		t.Fatal(err)
	}
	if again := files(); again != n {
		t.Errorf("a second seed left %d files, the first %d", again, n)
	}
	cmd := exec.Command("go", "build", "-x", "-trimpath", "-o", os.DevNull, ".")
	cmd.Dir = src
	cmd.Env = append(env, "GOCACHE="+seeded)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if c := strings.Count(string(out), "/compile -o"); c != 0 {
		t.Errorf("go build compiled %d package(s) in the seeded cache:\n%s", c, tail(string(out), 40))
	}
}
