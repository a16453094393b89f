package buildtest

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/google/go-containerregistry/pkg/v1"
)

// goCacheTargets are the platforms the build tests compile examples/hello
// for: every variant imgctl build makes.
var goCacheTargets = []struct{ os, arch string }{{"linux", "amd64"}, {"linux", "arm64"}, {"windows", "amd64"}}

// containerGOCACHE is GolangImage's GOCACHE, without the leading slash.
const containerGOCACHE = "tmp/gocache"

// goCacheLayerOnce is a layer holding, at GolangImage's GOCACHE, a Go build
// cache in which examples/hello's dependencies (the standard library it
// imports) are compiled for every target, with the flags its Dockerfile
// uses (CGO_ENABLED=0, -trimpath).
//
// Why: every test daemon starts cold, and its first build of examples/hello
// compiled net/http and its dependencies three times over inside the
// build container, about a CPU-minute per target: the largest cost of the
// test suite on two cores. The go command keys standard-library compiles
// by the toolchain's content, the sources, the target and the flags, never
// by GOROOT's location ("The compiler hides the exact value of $GOROOT"),
// so what the host's own toolchain compiles is what the same toolchain in
// GolangImage would have compiled, and the build container's go build finds
// it in its cache. The build still runs, links and is exported through
// BuildKit as before; only the compiles are not repeated.
//
// The host-side cache and the layer packed from it are shared by every
// test process and run on the machine (sharedLayer), keyed by the
// toolchain and examples/hello's files, so that the test packages running
// in parallel, and the next CI run, share one warm-up.
var goCacheLayerOnce = sync.OnceValues(func() (v1.Layer, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	hello := filepath.Join(root, "examples", "hello")
	version, err := exec.Command("go", "version").Output()
	if err != nil {
		return nil, fmt.Errorf("go version: %w", err)
	}
	// The layer depends on examples/hello's files and, through the go
	// command's VCS stamp in its main package, on the repository's commit
	// and whether it is modified; the cache it is packed from depends only
	// on the toolchain (the go command's cache is content-addressed), so
	// every commit reuses the standard library's compiles.
	parts := []string{"gocache", string(version), vcsState(root)}
	err = filepath.WalkDir(hello, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(hello, p)
		parts = append(parts, rel, string(b))
		return err
	})
	if err != nil {
		return nil, err
	}
	key := contentKey(parts...)
	dir, err := sharedDir()
	if err != nil {
		return nil, err
	}
	cache := filepath.Join(dir, contentKey("gocache-dir", string(version)), "gocache")
	l, err := sharedLayer(key, "gocache.tar.gz", func(w tarWriter) error {
		if err := warmGoCache(cache, hello); err != nil {
			return err
		}
		return addTree(w, cache, containerGOCACHE)
	})
	if err != nil {
		return nil, fmt.Errorf("writing Go build cache layer from %s: %w", cache, err)
	}
	return l, nil
})

// vcsState is what the go command stamps into a main package built in the
// repository at root: its commit and whether the tree is modified (empty
// outside a git checkout).
func vcsState(root string) string {
	head, _ := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	status, _ := exec.Command("git", "-C", root, "status", "--porcelain").Output()
	return string(head) + "\x00" + string(status)
}

// warmGoCache compiles the Go program in dir for every goCacheTargets
// entry into the build cache cache, holding an exclusive lock on
// cache+".lock" meanwhile: a second test process waits, then finds every
// compile cached and is done in seconds.
func warmGoCache(cache, dir string) error {
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(cache+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	for _, t := range goCacheTargets {
		cmd := exec.Command("go", "build", "-trimpath", "-o", os.DevNull, ".")
		cmd.Dir = dir
		cmd.Env = append(goCacheEnv(os.Environ()), "GOCACHE="+cache, "CGO_ENABLED=0", "GOOS="+t.os, "GOARCH="+t.arch,
			"GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("warming the Go build cache for %s/%s: %w\n%s", t.os, t.arch, err, out)
		}
	}
	return nil
}

// goCacheEnv is env without the variables that change what the go command
// compiles or where it caches: GolangImage sets none of them but the ones
// warmGoCache sets itself.
func goCacheEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOCACHE", "CGO_ENABLED", "GOOS", "GOARCH", "GOFLAGS", "GOAMD64", "GOARM64", "GOEXPERIMENT",
			"GOTOOLCHAIN", "GOPROXY", "GOWORK", "GODEBUG":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// addTree writes the files and directories under src into the layer as
// dst/..., in lexical order.
func addTree(w tarWriter, src, dst string) error {
	if err := w.dir(dst, 0o777); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == src {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		name := dst + "/" + filepath.ToSlash(rel)
		if d.IsDir() {
			return w.dir(name, 0o777)
		}
		fi, err := d.Info()
		if err != nil || !fi.Mode().IsRegular() {
			return err
		}
		return w.copyFile(name, path, fi)
	})
}
