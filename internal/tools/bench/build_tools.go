package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sync/errgroup"
)

// buildkitVersion is the buildkit that go.mod requires; buildctl is built
// from this module so that it matches the daemon.
const buildkitVersion = "v0.34.2"

// newBuildTools returns the build tools in report order: imgctl without
// and (for information) with its post-push verify, the extra rows (see
// buildExtras), imgctl at the baseline revision when one is given, then
// buildctl.
func newBuildTools(root, work string, withVerify bool, baseline string) ([]tool, error) {
	home := func(n string) (cmdTool, error) { return newCmdTool(filepath.Join(work, n)) }
	h, err := home("build-imgctl")
	if err != nil {
		return nil, err
	}
	tools := []tool{&imgctlBuild{imgctl: &imgctl{cmdTool: h, root: root}, extra: buildPlainArgs}}
	if withVerify {
		if h, err = home("build-imgctl-verify"); err != nil {
			return nil, err
		}
		tools = append(tools, &imgctlBuild{imgctl: &imgctl{cmdTool: h, root: root, verify: true}, extra: buildPlainArgs})
	}
	for _, x := range buildExtras {
		if h, err = home("build-imgctl-" + slug(x.suffix)); err != nil {
			return nil, err
		}
		tools = append(tools, &imgctlBuild{imgctl: &imgctl{cmdTool: h, root: root}, suffix: x.suffix, extra: x.args})
	}
	if baseline != "" {
		if h, err = home("build-imgctl-" + slug(baseline)); err != nil {
			return nil, err
		}
		tools = append(tools, &imgctlBuild{imgctl: &imgctl{cmdTool: h, root: root, baseline: baseline}})
	}
	if h, err = home("build-buildctl"); err != nil {
		return nil, err
	}
	return append(tools, &buildctl{cmdTool: h, root: root}), nil
}

// buildPlainArgs are the flags of the imgctl rows compared with buildctl:
// the same work as buildctl's solves. buildctl attaches no attestation
// unless asked, so imgctl's default provenance (mode=min) is turned off.
var buildPlainArgs = []string{"--provenance=false"}

// buildExtras are further imgctl rows, for information (the goals are
// judged on the imgctl row): imgctl's default, with a SLSA provenance
// attestation per image.
var buildExtras = []struct {
	suffix string
	args   []string
}{{suffix: "+provenance"}}

// imgctlBuild is imgctl running `imgctl build`, with extra flags after the
// common ones; suffix is appended to its row name.
type imgctlBuild struct {
	*imgctl
	suffix string
	extra  []string
	// keepCache keeps imgctl's cache from run to run in the cold case.
	keepCache bool
}

// coldCache is imgctl's cache directory in the tool's private home
// (os.UserCacheDir under HOME), which holds the skeletons of Windows base
// layers, and whether the cold case empties it before each run.
func (t *imgctlBuild) coldCache() (string, bool) {
	return filepath.Join(t.home, ".cache", "imgctl"), !t.keepCache
}

// Name is the row name: imgctl's, with the suffix of an extra row.
func (t *imgctlBuild) Name() string { return t.imgctl.Name() + t.suffix }

func (t *imgctlBuild) Run(ctx context.Context, o op) error {
	b, ok := o.(buildOp)
	if !ok {
		return t.imgctl.Run(ctx, o)
	}
	_, err := t.exec(ctx, append(imgctlBuildArgs(b, t.verify), t.extra...)...)
	// Exit 1 with verify on means the index was pushed and verify reported
	// findings: the build is done.
	if exit := (*exec.ExitError)(nil); t.verify && errors.As(err, &exit) && exit.ExitCode() == 1 {
		return nil
	}
	return err
}

// imgctlBuildArgs is the imgctl command line for b.
func imgctlBuildArgs(b buildOp, verify bool) []string {
	args := []string{"build", "--builder", b.Addr, "--progress", "quiet"}
	if !verify {
		args = append(args, "--no-verify")
	}
	platforms := b.Linux
	if len(b.Windows) > 0 {
		platforms = append(append([]string(nil), b.Linux...), "windows/amd64")
		var rel, bases []string
		for _, w := range b.Windows {
			rel = append(rel, w.Release)
			bases = append(bases, w.Release+"="+w.Base)
		}
		args = append(args, "--windows", strings.Join(rel, ","), "--windows-base", strings.Join(bases, ","))
	}
	args = append(args, "--platform", strings.Join(platforms, ","), "-t", b.Target)
	for _, a := range b.BuildArgs {
		args = append(args, "--build-arg", a[0]+"="+a[1])
	}
	return append(args, b.Context)
}

// buildctl is BuildKit's own client, built from this module's buildkit.
type buildctl struct {
	cmdTool
	root string
}

func (*buildctl) Name() string    { return "buildctl" }
func (*buildctl) Version() string { return buildkitVersion }

// Install builds buildctl into binDir unless the binary there already
// reports buildkit v0.34.2. `go install pkg@version` does not work: the
// module's exclude directives apply only to a build inside the module.
func (t *buildctl) Install(ctx context.Context, binDir string) error {
	t.bin = filepath.Join(binDir, "buildctl")
	const mod = "github.com/moby/buildkit"
	if v, err := moduleVersion(ctx, t.bin, mod); err == nil && v == buildkitVersion {
		return nil
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", t.bin, mod+"/cmd/buildctl")
	cmd.Dir = t.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building buildctl: %w: %s", err, tail(string(out), 5))
	}
	if v, err := moduleVersion(ctx, t.bin, mod); err != nil || v != buildkitVersion {
		return fmt.Errorf("built %s reports buildkit %q (%v), want %s", t.bin, v, err, buildkitVersion)
	}
	return nil
}

// Configure does nothing: buildkitd's config marks the registry as plain HTTP.
func (*buildctl) Configure(context.Context, string) error { return nil }

// Run does one solve for the Linux platforms pushing an index to Target
// when there is no Windows variant. With Windows variants it runs the
// Linux solve (when there are Linux platforms) and one solve per variant
// concurrently, each pushed by digest, and records the digests: buildctl
// cannot merge them into one index.
func (t *buildctl) Run(ctx context.Context, o op) error {
	b, ok := o.(buildOp)
	if !ok {
		return fmt.Errorf("buildctl %s: %w", o.opName(), errUnsupported)
	}
	if len(b.Windows) == 0 {
		_, err := t.exec(ctx, buildctlArgs(b, strings.Join(b.Linux, ","), "", "type=image,name="+b.Target+",push=true", "")...)
		return err
	}
	repo, _, _ := strings.Cut(b.Target, ":merged")
	out := "type=image,name=" + repo + ",push-by-digest=true,push=true"
	meta, err := os.MkdirTemp(t.home, "meta-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(meta)
	type solve struct{ platform, windowsBase, file string }
	var solves []solve
	if len(b.Linux) > 0 {
		solves = append(solves, solve{platform: strings.Join(b.Linux, ","), file: filepath.Join(meta, "linux.json")})
	}
	for _, w := range b.Windows {
		solves = append(solves, solve{"windows/amd64", w.Base, filepath.Join(meta, w.Release+".json")})
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, s := range solves {
		g.Go(func() error {
			_, err := t.exec(gctx, buildctlArgs(b, s.platform, s.windowsBase, out, s.file)...)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	var refs []string
	for _, s := range solves {
		raw, err := os.ReadFile(s.file)
		if err != nil {
			return err
		}
		var m struct {
			Digest string `json:"containerimage.digest"`
		}
		if err := json.Unmarshal(raw, &m); err != nil || m.Digest == "" {
			return fmt.Errorf("buildctl metadata %s has no containerimage.digest (%v)", filepath.Base(s.file), err)
		}
		refs = append(refs, repo+"@"+m.Digest)
	}
	if b.record != nil {
		b.record(b.Target, refs)
	}
	return nil
}

// buildctlArgs is one `buildctl build` of b for platform.
func buildctlArgs(b buildOp, platform, windowsBase, output, metadataFile string) []string {
	args := []string{"--addr", b.Addr, "build", "--progress", "quiet", "--frontend", "dockerfile.v0",
		"--local", "context=" + b.Context, "--local", "dockerfile=" + b.Context,
		"--opt", "platform=" + platform}
	for _, a := range b.BuildArgs {
		args = append(args, "--opt", "build-arg:"+a[0]+"="+a[1])
	}
	if windowsBase != "" {
		args = append(args, "--opt", "build-arg:WINDOWS_BASE="+windowsBase)
	}
	args = append(args, "--output", output)
	if metadataFile != "" {
		args = append(args, "--metadata-file", metadataFile)
	}
	return args
}
