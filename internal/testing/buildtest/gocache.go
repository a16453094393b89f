package buildtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
// compile cached and is done in seconds. Each target's compiles are first
// copied from the machine's own build cache when it holds them
// (seedGoCache), and compiled into it when it does not, so that they are
// shared with every other build on the machine.
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
	machine, err := machineGoCache()
	if err != nil {
		return err
	}
	for _, t := range goCacheTargets {
		env := goCacheTargetEnv(t.os, t.arch)
		if machine != cache {
			if err := seedGoCache(cache, machine, dir, env); err != nil {
				return fmt.Errorf("seeding the Go build cache for %s/%s: %w", t.os, t.arch, err)
			}
		}
		cmd := exec.Command("go", "build", "-trimpath", "-o", os.DevNull, ".")
		cmd.Dir = dir
		cmd.Env = append(env, "GOCACHE="+cache)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("warming the Go build cache for %s/%s: %w\n%s", t.os, t.arch, err, out)
		}
	}
	return nil
}

// machineGoCache is the machine's build cache: go env GOCACHE in this
// process's environment.
func machineGoCache() (string, error) {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOCACHE: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// seedGoCache copies into the build cache cache the compiles of the Go
// program in dir and of every package it imports, as the go command run
// with env finds them in the build cache machine, compiling into machine
// first those it lacks.
//
// Why by hand: in a CI run on a cold cache, the tools, go vet and the
// release dry run compile the standard library for linux/amd64 and
// windows/amd64 with these very flags (CGO_ENABLED=0, -trimpath) into the
// machine's cache, and compiling it again into GolangImage's own cache
// cost a CPU-minute per target. The go command exports no cache entries,
// so this lists them the documented way (go list -export: each package's
// BuildID, whose first part is the compile's action ID, and its Export
// file) and copies the two files per compile in the layout of
// cmd/go/internal/cache (DIR/xx/ACTIONID-a, whose third field is the
// output ID, and DIR/xx/OUTPUTID-d). Were that layout to change, nothing
// would be found, the build that follows would compile as before, and
// TestGolangImageCompilesNothing would still hold.
func seedGoCache(cache, machine, dir string, env []string) error {
	if machine == "" || machine == "off" {
		return nil
	}
	cmd := exec.Command("go", "list", "-trimpath", "-export", "-deps", "-f", "{{.BuildID}}", ".")
	cmd.Dir = dir
	cmd.Env = append(slices.Clone(env), "GOCACHE="+machine)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go list -export: %w\n%s", err, stderr.Bytes())
	}
	for _, id := range strings.Fields(string(out)) {
		action, _, _ := strings.Cut(id, "/")
		prefix, err := base64.RawURLEncoding.DecodeString(action)
		if err != nil {
			return fmt.Errorf("build ID %q: %w", id, err)
		}
		matches, _ := filepath.Glob(filepath.Join(machine, fmt.Sprintf("%02x", prefix[0]), fmt.Sprintf("%x", prefix)+"*-a"))
		for _, m := range matches {
			full, _ := hex.DecodeString(strings.TrimSuffix(filepath.Base(m), "-a"))
			// The compile's archive, then the compiler output the go
			// command replays with it (cache.Subkey(id, "stdout")).
			stdout := sha256.Sum256(append(append([]byte("subkey:"), full...), "stdout"...))
			for _, key := range [][]byte{full, stdout[:]} {
				if err := copyCacheEntry(machine, cache, key); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// copyCacheEntry copies the build cache entry key (its -a file and the -d
// file it names) from the cache from to the cache to, unless to has it.
// A missing entry is not an error: the go command compiles what it lacks.
func copyCacheEntry(from, to string, key []byte) error {
	file := func(dir string, id []byte, kind string) string {
		return filepath.Join(dir, fmt.Sprintf("%02x", id[0]), fmt.Sprintf("%x-%s", id, kind))
	}
	entry, err := os.ReadFile(file(from, key, "a"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	f := strings.Fields(string(entry))
	if len(f) < 3 || f[0] != "v1" {
		return nil
	}
	output, err := hex.DecodeString(f[2])
	if err != nil || len(output) == 0 {
		return nil
	}
	for _, c := range []struct {
		id   []byte
		kind string
	}{{output, "d"}, {key, "a"}} { // the output first: an entry never names a missing file
		src, dst := file(from, c.id, c.kind), file(to, c.id, c.kind)
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		b, err := os.ReadFile(src)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst+".tmp", b, 0o644); err != nil {
			return err
		}
		if err := os.Rename(dst+".tmp", dst); err != nil {
			return err
		}
	}
	return nil
}

// goCacheTargetEnv is the environment of the go command that compiles for
// goos/goarch as GolangImage's build container does (with the flags
// examples/hello's Dockerfile gives, CGO_ENABLED=0 and -trimpath), less
// GOCACHE, which the caller adds.
func goCacheTargetEnv(goos, goarch string) []string {
	return append(goCacheEnv(os.Environ()), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch,
		"GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod")
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
