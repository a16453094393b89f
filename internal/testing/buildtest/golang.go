package buildtest

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/v1"
)

// HostBusybox is the statically linked busybox (Debian busybox-static) that
// GolangImage installs as /bin/busybox.
const HostBusybox = "/bin/busybox"

// ErrDynamicBusybox is returned when HostBusybox needs a dynamic loader.
var ErrDynamicBusybox = errors.New("busybox is dynamically linked (apt-get install -y busybox-static)")

// GolangImage returns a linux/amd64 image with this machine's Go toolchain
// as /usr/local/go (trimmed to what `go build` needs) and busybox as /bin/sh
// and friends. Its environment makes builds offline: GOTOOLCHAIN=local,
// GOPROXY=off, GOFLAGS=-mod=mod, GOCACHE=/tmp/gocache, which a third layer
// fills with examples/hello's compiled dependencies (see goCacheLayerOnce).
// The toolchain and cache layers are written once per process into
// temporary files.
func GolangImage() (v1.Image, error) {
	goLayer, err := goLayerOnce()
	if err != nil {
		return nil, err
	}
	bb, err := busyboxLayer()
	if err != nil {
		return nil, err
	}
	cache, err := goCacheLayerOnce()
	if err != nil {
		return nil, err
	}
	return newImage(v1.Platform{OS: "linux", Architecture: "amd64"}, v1.Config{
		Env: []string{
			"PATH=/usr/local/go/bin:/bin",
			"GOCACHE=/tmp/gocache",
			"HOME=/tmp",
			"GOTOOLCHAIN=local",
			"GOPROXY=off",
			"GOSUMDB=off",
			"GOFLAGS=-mod=mod",
		},
		WorkingDir: "/",
		Cmd:        []string{"/bin/sh"},
	}, bb, goLayer, cache)
}

// layerCache is the per-process directory that holds the toolchain layer.
var layerCache struct {
	sync.Mutex
	dir string
}

// layerDir returns the per-process directory of the layer files, made on
// first use.
func layerDir() (string, error) {
	layerCache.Lock()
	defer layerCache.Unlock()
	if layerCache.dir == "" {
		dir, err := os.MkdirTemp("", "imgctl-golang-layer-")
		if err != nil {
			return "", err
		}
		layerCache.dir = dir
	}
	return layerCache.dir, nil
}

// RemoveLayerCache deletes the layer files that GolangImage wrote.
// Call it from TestMain after m.Run; GolangImage fails afterwards.
func RemoveLayerCache() error {
	layerCache.Lock()
	defer layerCache.Unlock()
	if layerCache.dir == "" {
		return nil
	}
	return os.RemoveAll(layerCache.dir)
}

var goLayerOnce = sync.OnceValues(func() (v1.Layer, error) {
	goroot, err := hostGOROOT()
	if err != nil {
		return nil, err
	}
	version, err := exec.Command("go", "version").Output()
	if err != nil {
		return nil, fmt.Errorf("go version: %w", err)
	}
	l, err := sharedLayer(contentKey("go", string(version), goroot), "go.tar.gz", func(w tarWriter) error { return addGOROOT(w, goroot) })
	if err != nil {
		return nil, fmt.Errorf("writing Go toolchain layer from %s: %w", goroot, err)
	}
	return l, nil
})

func hostGOROOT() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// busyboxLayer installs HostBusybox as /bin/busybox with a symlink per applet.
func busyboxLayer() (v1.Layer, error) {
	if err := checkStatic(HostBusybox); err != nil {
		return nil, err
	}
	out, err := exec.Command(HostBusybox, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list: %w", HostBusybox, err)
	}
	fi, err := os.Stat(HostBusybox)
	if err != nil {
		return nil, err
	}
	return memLayer(func(w tarWriter) error {
		for _, d := range []string{"bin", "tmp"} {
			mode := map[string]int64{"bin": 0o755, "tmp": 0o1777}[d]
			if err := w.dir(d, mode); err != nil {
				return err
			}
		}
		if err := w.copyFile("bin/busybox", HostBusybox, fi); err != nil {
			return err
		}
		for _, applet := range strings.Fields(string(out)) {
			if applet == "busybox" || strings.Contains(applet, "/") {
				continue
			}
			if err := w.symlink("bin/"+applet, "busybox"); err != nil {
				return err
			}
		}
		return nil
	})
}

func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%w: %s", ErrDynamicBusybox, path)
		}
	}
	return nil
}
