package release

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/imgctl/imgctl/build"
)

// Windows releases the image has a variant for (the gate's --windows), and
// the Linux platforms a release's image has: imagePlatforms of every
// target, which the gate and the notes require.
const (
	windowsReleases = "ltsc2022,ltsc2025"
	linuxPlatforms  = "linux/amd64,linux/arm64"
)

// imagePlatforms returns the Linux platforms of the image built from the
// binaries of targets: the Linux targets, in order. The Windows variants
// need windows/amd64, and the image at least one Linux platform; targets
// without them are refused. A release builds every target, so its image
// has linux/amd64 and linux/arm64; CI's dry run leaves out linux/arm64,
// whose image path TestImageFromPrebuiltBinaries covers, to save a cross
// compile of the whole graph.
func imagePlatforms(targets []Target) (linux []string, err error) {
	for _, t := range targets {
		if t.OS == "linux" {
			linux = append(linux, t.String())
		}
	}
	if !slices.Contains(targets, Target{"windows", "amd64"}) || len(linux) == 0 {
		return nil, fmt.Errorf("the targets %v leave the image without a binary: it needs windows/amd64 and a Linux target", targets)
	}
	return linux, nil
}

// Config is what differs between the real release and the dry run.
type Config struct {
	// Root is the module root: the source that is compiled, and
	// release/Dockerfile.
	Root string
	// Targets are the binaries to build; nil means Targets(). The image
	// has the Linux targets and the Windows releases, so windows/amd64
	// and a Linux target must be among them (imagePlatforms).
	Targets []Target
	// Dist is the output directory; Run empties it first.
	Dist string
	// Stamp is the version, revision and time stamped into the binaries.
	Stamp Stamp
	// Repository is where the image goes, e.g. registry.example.com/imgctl;
	// it is tagged with Stamp.Version.
	Repository string
	// Builder is the BuildKit address; "" means $BUILDKIT_HOST.
	Builder string
	// LinuxBase is the base of the Linux variants (distroless static).
	LinuxBase string
	// WindowsBases map each Windows release (ltsc2022, ltsc2025) to its
	// base (nanoserver).
	WindowsBases map[string]string
	// Key is the cosign private key file; its password comes from
	// COSIGN_PASSWORD.
	Key string
	// PublicKey, when set, is the key imgctl verify checks the new
	// signatures with.
	PublicKey string
	// Log receives the progress of every step and imgctl's own output;
	// nil discards them.
	Log io.Writer
	// Imgctl runs imgctl's commands (lint, build, verify, sign, inspect).
	// The caller passes cli.Execute to run them in process: this package
	// does not import the CLI (docs/architecture.md). nil runs the binary
	// Run compiled for the host (RunBinary), as a user's CI would; Run
	// then fails when Targets leave the host out.
	Imgctl Runner
}

// Runner runs one imgctl command with args, as the imgctl binary would,
// and returns its exit code; cli.Execute is one.
type Runner func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int

// RunBinary returns a Runner that runs the imgctl binary at path. A
// binary that cannot be started is exit code -1, with the reason written
// to stderr.
func RunBinary(path string) Runner {
	return func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		cmd := exec.CommandContext(ctx, path, args...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &exit) && exit.ExitCode() >= 0:
			return exit.ExitCode()
		default:
			fmt.Fprintf(stderr, "running %s: %v\n", path, err)
			return -1
		}
	}
}

// Result is what a release produced.
type Result struct {
	// Archives are the archive files' names in Dist, in Targets order.
	Archives []string
	// Image is the image reference by digest.
	Image string
}

// Run makes the release: binaries, archives, checksums.txt, the image
// (lint, build, verify, sign, verify the signature) and RELEASE_NOTES.md,
// all in Dist.
func Run(ctx context.Context, c Config) (Result, error) {
	var res Result
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Dist == "" || filepath.Clean(c.Dist) == filepath.Clean(c.Root) {
		return res, fmt.Errorf("refusing to empty %q as the output directory", c.Dist)
	}
	modTime, err := time.Parse(time.RFC3339, c.Stamp.Time)
	if err != nil {
		return res, fmt.Errorf("stamp time %q: want RFC 3339: %w", c.Stamp.Time, err)
	}
	bins := filepath.Join(c.Dist, "bin")
	targets := c.Targets
	if targets == nil {
		targets = Targets()
	}
	if c.Imgctl == nil {
		host := Target{runtime.GOOS, runtime.GOARCH}
		if !slices.Contains(targets, host) {
			return res, fmt.Errorf("the targets %v leave out the host %s, whose binary would run imgctl's commands: add it, or set Config.Imgctl", targets, host)
		}
		c.Imgctl = RunBinary(filepath.Join(bins, host.Dir(), host.Binary()))
	}
	linux, err := imagePlatforms(targets)
	if err != nil {
		return res, err
	}
	if err := os.RemoveAll(c.Dist); err != nil {
		return res, err
	}
	for _, t := range targets {
		step(c.Log, "go build %s", t)
		bin, err := Compile(ctx, c.Root, bins, t, c.Stamp)
		if err != nil {
			return res, err
		}
		if t.OS == runtime.GOOS && t.Arch == runtime.GOARCH {
			if err := CheckVersion(ctx, bin, c.Stamp); err != nil {
				return res, err
			}
		}
		name := ArchiveName(c.Stamp.Version, t)
		files := []ArchiveFile{{Name: t.Binary(), Path: bin, Mode: 0o755}, {Name: "README.md", Path: filepath.Join(c.Root, "README.md"), Mode: 0o644}}
		if err := WriteArchive(filepath.Join(c.Dist, name), files, modTime); err != nil {
			return res, err
		}
		res.Archives = append(res.Archives, name)
	}
	if err := WriteChecksums(c.Dist, res.Archives); err != nil {
		return res, err
	}
	if res.Image, err = c.image(ctx, bins, linux); err != nil {
		return res, err
	}
	return res, c.notes(ctx, res, linux)
}

// image builds, verifies and signs the image from the binaries in bins,
// with the Linux platforms linux, returning it by digest.
func (c Config) image(ctx context.Context, bins string, linux []string) (string, error) {
	tag := c.Repository + ":" + c.Stamp.Version
	dockerfile := filepath.Join(c.Root, "release", "Dockerfile")
	platforms := strings.Join(append(slices.Clone(linux), "windows/amd64"), ",")
	variant := []string{"-f", dockerfile, "--platform", platforms, "--windows", windowsReleases,
		"--build-arg", "LINUX_BASE=" + c.LinuxBase, "--build-arg", "VERSION=" + c.Stamp.Version,
		"--build-arg", "REVISION=" + c.Stamp.Revision}
	if len(c.WindowsBases) > 0 {
		variant = append(variant, "--windows-base", joinMap(c.WindowsBases))
	}
	if _, err := c.imgctl(ctx, append(append([]string{"lint"}, variant...), bins)...); err != nil {
		return "", err
	}
	meta := filepath.Join(c.Dist, "build-metadata.json")
	args := append([]string{"build", "--progress", "plain", "-t", tag, "--metadata-file", meta}, variant...)
	if c.Builder != "" {
		args = append(args, "--builder", c.Builder)
	}
	if _, err := c.imgctl(ctx, append(args, bins)...); err != nil {
		return "", err
	}
	digest, err := indexDigest(meta)
	if err != nil {
		return "", err
	}
	ref := tag + "@" + digest
	gate := []string{"verify", ref, "--windows", windowsReleases, "--require-platform", strings.Join(linux, ","), "--run-as-non-root"}
	if _, err := c.imgctl(ctx, gate...); err != nil {
		return "", err
	}
	if _, err := c.imgctl(ctx, "sign", ref, "--key", c.Key, "--attestations"); err != nil {
		return "", err
	}
	return ref, nil
}

// notes writes RELEASE_NOTES.md from imgctl inspect -o json and verify -o
// json of the image with the Linux platforms linux (with the signature
// check when there is a public key).
func (c Config) notes(ctx context.Context, res Result, linux []string) error {
	index, err := c.imgctl(ctx, "inspect", res.Image, "-o", "json")
	if err != nil {
		return err
	}
	args := []string{"verify", res.Image, "--windows", windowsReleases, "--require-platform", strings.Join(linux, ","), "--run-as-non-root", "-o", "json"}
	if c.PublicKey != "" {
		args = append(args, "--key", c.PublicKey)
	}
	report, err := c.imgctl(ctx, args...)
	if err != nil {
		return err
	}
	n := Notes{Version: c.Stamp.Version, Image: res.Image, Index: index, Verify: report, Archives: res.Archives, Signed: c.PublicKey != "", Linux: linux}
	var b bytes.Buffer
	if err := n.Write(&b); err != nil {
		return err
	}
	step(c.Log, "%s", NotesName)
	_, _ = c.Log.Write(b.Bytes())
	return os.WriteFile(filepath.Join(c.Dist, NotesName), b.Bytes(), 0o644)
}

// imgctl runs one imgctl command with c.Imgctl and returns its stdout,
// which it also copies to the log. Any exit code but 0 is an error.
func (c Config) imgctl(ctx context.Context, args ...string) ([]byte, error) {
	if c.Imgctl == nil {
		return nil, errors.New("no imgctl to run: Config.Imgctl is nil")
	}
	step(c.Log, "imgctl %s", strings.Join(args, " "))
	var out bytes.Buffer
	if code := c.Imgctl(ctx, args, os.Stdin, io.MultiWriter(&out, c.Log), c.Log); code != 0 {
		return nil, fmt.Errorf("imgctl %s: exit %d", args[0], code)
	}
	return out.Bytes(), nil
}

// indexDigest reads the index digest from imgctl build's metadata file.
func indexDigest(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var m build.Metadata
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("reading %s: %w", filepath.Base(path), err)
	}
	if m.Index.Digest == "" {
		return "", errors.New("imgctl build's metadata names no index digest")
	}
	return m.Index.Digest, nil
}

func joinMap(m map[string]string) string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, ",")
}

// step logs the start of a step with the time of day, which times the
// steps in CI logs.
func step(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "\n== %s "+format+"\n", append([]any{time.Now().UTC().Format(time.TimeOnly)}, args...)...)
}
