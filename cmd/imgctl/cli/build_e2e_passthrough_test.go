package cli

import (
	"archive/tar"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/crypto/ssh/agent"

	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/snapshot"
)

// passthroughDockerfile copies a secret and proves an SSH agent socket was
// forwarded, in a Linux stage that runs (the golang base has a shell).
const passthroughDockerfile = `ARG GOLANG_IMAGE
FROM ${GOLANG_IMAGE} AS s
RUN --mount=type=secret,id=token cp /run/secrets/token /token
RUN --mount=type=ssh test -S "$SSH_AUTH_SOCK" && echo forwarded > /ssh
FROM scratch
COPY --from=s /token /ssh /
`

// secretsAndSSH: --secret and --ssh reach RUN --mount on a real daemon.
func (e *e2e) secretsAndSSH(t *testing.T) {
	dir := t.TempDir()
	df := filepath.Join(dir, "Dockerfile")
	secret := filepath.Join(dir, "token.txt")
	for p, s := range map[string]string{df: passthroughDockerfile, secret: "s3cr3t-value"} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sock := serveAgent(t)
	tag := e.reg.Host() + "/passthrough:1"
	out, stderr, code := run(t, "build", "--builder", e.daemon.Addr, "--progress", "plain", "--no-verify",
		"--platform", "linux/amd64", "-t", tag, "-f", df, "--build-arg", "GOLANG_IMAGE="+e.bases.Golang,
		"--secret", "id=token,src="+secret, "--ssh", "default="+sock, dir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 40))
	}
	files := e.imageFiles(t, tag)
	if files["token"] != "s3cr3t-value" || files["ssh"] != "forwarded\n" {
		t.Errorf("image files %q", files)
	}
}

// serveAgent serves an in-memory SSH agent holding one key on a unix
// socket, for --ssh default=SOCKET.
func serveAgent(t *testing.T) string {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	kr := agent.NewKeyring()
	if err := kr.Add(agent.AddedKey{PrivateKey: key}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = agent.ServeAgent(kr, c)
			}()
		}
	}()
	return sock
}

// imageFiles returns the regular files of the only image at tag (through
// its one-entry index), by path.
func (e *e2e) imageFiles(t *testing.T, tag string) map[string]string {
	t.Helper()
	ii, im := e.indexAt(t, tag)
	// One image, and since builds attach provenance by default
	// (--provenance mode=min) the attestation manifest that names it.
	var images, atts []v1.Descriptor
	for _, d := range im.Manifests {
		if snapshot.IsAttestation(d) {
			atts = append(atts, d)
		} else {
			images = append(images, d)
		}
	}
	if len(images) != 1 || len(atts) != 1 || atts[0].Annotations[snapshot.AnnotationReferenceDigest] != images[0].Digest.String() {
		t.Fatalf("index entries %+v: want one image and its attestation manifest", im.Manifests)
	}
	img, err := ii.Image(images[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Typeflag == tar.TypeReg {
				dt, err := io.ReadAll(tr)
				if err != nil {
					t.Fatal(err)
				}
				files[strings.TrimPrefix(h.Name, "/")] = string(dt)
			}
		}
		_ = rc.Close()
	}
	return files
}

// registryCache: --cache-to exports the build cache to a registry, and a
// fresh daemon with --cache-from builds the same image without compiling.
// That build has two tags (-t twice, one solve that BuildKit would
// otherwise tag itself): both point at the one index imgctl publishes.
func (e *e2e) registryCache(t *testing.T) {
	cacheRef := e.reg.Host() + "/hello-cache:linux"
	args := []string{"--progress", "rawjson", "--no-verify", "--platform", "linux/amd64,linux/arm64",
		"--build-arg", "GOLANG_IMAGE=" + e.bases.Golang, "--build-arg", "LINUX_BASE=" + e.bases.Distroless,
		"--build-arg", "VERSION=e2e", e.hello}
	out, stderr, code := run(t, append([]string{"build", "--builder", e.daemon.Addr, "-t", e.reg.Host() + "/hello:cache-to",
		"--cache-to", "type=registry,ref=" + cacheRef + ",mode=max"}, args...)...)
	if code != 0 {
		t.Fatalf("--cache-to: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 40))
	}
	if _, err := remote.Head(e.ref(t, cacheRef)); err != nil {
		t.Fatalf("cache export %s: %v", cacheRef, err)
	}
	fresh := buildtest.New(t, buildtest.Options{InsecureRegistries: []string{e.reg.Host()}})
	start := time.Now()
	out, stderr, code = run(t, append([]string{"build", "--builder", fresh.Addr, "-t", e.reg.Host() + "/hello:cache-from",
		"-t", e.reg.Host() + "/hello:sha-abc123", "--cache-from", "type=registry,ref=" + cacheRef}, args...)...)
	t.Logf("build on a fresh daemon from the registry cache took %s", time.Since(start).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("--cache-from: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 40))
	}
	if compiles, cached := compileVertices(stderr); compiles == 0 || cached != compiles {
		t.Errorf("fresh daemon: compile vertices: %d completed, %d cached; want all from the registry cache", compiles, cached)
	}
	a, err := remote.Head(e.ref(t, e.reg.Host()+"/hello:cache-from"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := remote.Head(e.ref(t, e.reg.Host()+"/hello:sha-abc123"))
	if err != nil || b.Digest != a.Digest || !strings.Contains(out, a.Digest.String()) {
		t.Errorf("-t twice: hello:cache-from at %s, hello:sha-abc123 at %v (%v); stdout:\n%s", a.Digest, b, err, out)
	}
}

// compileVertices counts the completed `go build` vertices in rawjson
// progress, and how many of them came from the cache.
func compileVertices(rawjson string) (completed, cached int) {
	for line := range strings.SplitSeq(rawjson, "\n") {
		var s struct {
			Vertexes []struct {
				Name      string     `json:"name"`
				Cached    bool       `json:"cached"`
				Completed *time.Time `json:"completed"`
			} `json:"vertexes"`
		}
		if json.Unmarshal([]byte(line), &s) != nil {
			continue
		}
		for _, v := range s.Vertexes {
			if strings.Contains(v.Name, "go build") && v.Completed != nil {
				completed++
				if v.Cached {
					cached++
				}
			}
		}
	}
	return completed, cached
}

// tlsBuilder: a tcp:// daemon that requires TLS client certificates builds
// with --tlscacert, --tlscert and --tlskey; without the client
// certificate the daemon is named as unreachable, exit 2.
func (e *e2e) tlsBuilder(t *testing.T) {
	d := buildtest.New(t, buildtest.Options{InsecureRegistries: []string{e.reg.Host()}, TLS: true})
	dir := t.TempDir()
	for p, s := range map[string]string{"Dockerfile": "FROM scratch\nCOPY hello.txt /\n", "hello.txt": "over TLS"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tag := e.reg.Host() + "/tls:1"
	args := []string{"--progress", "quiet", "--no-verify", "--platform", "linux/amd64", "-t", tag, dir}
	out, stderr, code := run(t, append([]string{"build", "--builder", d.Addr, "--tlscacert", d.TLS.CACert,
		"--tlscert", d.TLS.Cert, "--tlskey", d.TLS.Key}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, tail(stderr, 40))
	}
	if files := e.imageFiles(t, tag); files["hello.txt"] != "over TLS" {
		t.Errorf("image files %q", files)
	}
	args[len(args)-2] = e.reg.Host() + "/tls:2" // a tag taken would be reported first
	_, stderr, code = run(t, append([]string{"build", "--builder", d.Addr, "--tlscacert", d.TLS.CACert}, args...)...)
	if code != ExitError || !strings.Contains(stderr, nodes.ErrNoBuilder.Error()) || !strings.Contains(stderr, d.Addr) {
		t.Errorf("without a client certificate: exit %d, stderr:\n%s", code, stderr)
	}
}
