package main

// The tools under test: the tool interface, the child-process runner every
// tool is built on (cmdTool), and the clients: imgctl, crane and regctl
// (index create, rebase, promote), imgctl build and buildctl.

import (
	"bufio"
	"bytes"
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

// errUnsupported is returned by a tool for an operation it has no command for.
var errUnsupported = errors.New("operation not supported by this tool")

// op is one operation a case asks every tool to perform.
type op interface{ opName() string }

// indexCreate merges Sources (full references) into one index tagged Target.
// Platforms lists the os/arch[/variant] to take from sources that are
// indexes, for tools that otherwise nest an index instead of merging it.
type indexCreate struct {
	Target    string
	Sources   []string
	Platforms []string
}

func (indexCreate) opName() string { return "index create" }

// tool is one command-line client under test. New cases add an op type and
// a branch in each tool's args; tools that cannot do it return errUnsupported.
type tool interface {
	Name() string
	// Version is known after Install.
	Version() string
	// Install makes the tool available (installing or building it) in binDir.
	Install(ctx context.Context, binDir string) error
	// Configure points the tool at a plain-HTTP registry on host, once per
	// registry, in the tool's private home.
	Configure(ctx context.Context, host string) error
	// Run performs o against the registry.
	Run(ctx context.Context, o op) error
}

// cmdTool runs a tool as a child process with a private HOME and
// DOCKER_CONFIG, so that no tool reads another's credentials or settings.
type cmdTool struct {
	bin  string
	home string
	// rss, when set, records the peak RSS of the processes exec runs.
	rss *peakRSS
	// extraEnv is added to env, such as COSIGN_PASSWORD for imgctl sign.
	extraEnv []string
}

func newCmdTool(home string) (cmdTool, error) {
	if err := os.MkdirAll(filepath.Join(home, ".docker"), 0o755); err != nil {
		return cmdTool{}, err
	}
	return cmdTool{home: home}, nil
}

// env is a minimal environment: nothing from the caller's registry setup.
func (t cmdTool) env() []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.home,
		"DOCKER_CONFIG=" + filepath.Join(t.home, ".docker"),
		"XDG_CONFIG_HOME=" + filepath.Join(t.home, ".config"),
		"TMPDIR=" + os.TempDir(),
		"NO_PROXY=127.0.0.1,localhost",
	}, t.extraEnv...)
}

// exec runs the tool binary with args and returns stdout; errors carry the
// last lines of stderr.
func (t cmdTool) exec(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, t.bin, args...)
	cmd.Env = t.env()
	cmd.Dir = t.home
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t.rss.prepare()
	err := cmd.Run()
	t.rss.observe(cmd.ProcessState)
	if err != nil {
		msg := tail(stderr.String(), 3)
		if msg == "" {
			msg = tail(stdout.String(), 3)
		}
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", filepath.Base(t.bin), strings.Join(args[:min(len(args), 3)], " "), err, msg)
	}
	return stdout.String(), nil
}

// tail returns the last n non-empty lines of s, joined by " | ".
func tail(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// goInstall installs pkg@version into binDir unless the binary there already
// reports that version of module mod.
func goInstall(ctx context.Context, binDir, pkg, mod, version string) (string, error) {
	bin := filepath.Join(binDir, filepath.Base(pkg))
	if v, err := moduleVersion(ctx, bin, mod); err == nil && v == version {
		return bin, nil
	}
	cmd := exec.CommandContext(ctx, "go", "install", pkg+"@"+version)
	cmd.Env = append(os.Environ(), "GOBIN="+binDir, "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %w: %s", pkg, version, err, tail(string(out), 5))
	}
	if v, err := moduleVersion(ctx, bin, mod); err != nil || v != version {
		return "", fmt.Errorf("installed %s reports %q (%v), want %s", bin, v, err, version)
	}
	return bin, nil
}

// moduleVersion reads the version of module mod (main or dependency) from
// the build information of bin, as `go version -m` prints it.
func moduleVersion(ctx context.Context, bin, mod string) (string, error) {
	if _, err := os.Stat(bin); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, "go", "version", "-m", bin).Output()
	if err != nil {
		return "", fmt.Errorf("go version -m %s: %w", bin, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 3 && (f[0] == "mod" || f[0] == "dep") && f[1] == mod {
			return f[2], nil
		}
	}
	return "", fmt.Errorf("%s: module %s not in build info", bin, mod)
}

// Pinned peer versions.
const (
	craneVersion  = "v0.22.1"
	regctlVersion = "v0.11.7"
)

// crane is go-containerregistry's CLI.
type crane struct{ cmdTool }

func (*crane) Name() string    { return "crane" }
func (*crane) Version() string { return craneVersion }

func (t *crane) Install(ctx context.Context, binDir string) (err error) {
	t.bin, err = goInstall(ctx, binDir, "github.com/google/go-containerregistry/cmd/crane",
		"github.com/google/go-containerregistry", craneVersion)
	return err
}

// Configure does nothing: crane takes --insecure on every command.
func (*crane) Configure(context.Context, string) error { return nil }

func (t *crane) Run(ctx context.Context, o op) error {
	switch o := o.(type) {
	case indexCreate:
		// With no base index, crane index append starts from an empty OCI index.
		args := []string{"--insecure", "index", "append", "-t", o.Target}
		for _, s := range o.Sources {
			args = append(args, "-m", s)
		}
		_, err := t.exec(ctx, args...)
		return err
	case rebaseIndex:
		return t.rebase(ctx, o)
	case promoteIndex:
		// crane copies the index and its children, nothing that refers to them.
		_, err := t.exec(ctx, "--insecure", "copy", o.Source, o.Target)
		return err
	}
	return fmt.Errorf("crane %s: %w", o.opName(), errUnsupported)
}

// regctl is regclient's CLI.
type regctl struct{ cmdTool }

func (*regctl) Name() string    { return "regctl" }
func (*regctl) Version() string { return regctlVersion }

func (t *regctl) Install(ctx context.Context, binDir string) (err error) {
	t.bin, err = goInstall(ctx, binDir, "github.com/regclient/regclient/cmd/regctl",
		"github.com/regclient/regclient", regctlVersion)
	return err
}

// Configure writes the registry's TLS setting into regctl's config in the
// tool's private HOME, as a user would.
func (t *regctl) Configure(ctx context.Context, host string) error {
	_, err := t.exec(ctx, "registry", "set", host, "--tls", "disabled")
	return err
}

func (t *regctl) Run(ctx context.Context, o op) error {
	switch o := o.(type) {
	case indexCreate:
		args := []string{"index", "create", o.Target}
		for _, s := range o.Sources {
			args = append(args, "--ref", s)
		}
		// Without --platform regctl nests an index source as one child;
		// with it, it takes the matching children (single images ignore it).
		for _, p := range o.Platforms {
			args = append(args, "--platform", p)
		}
		_, err := t.exec(ctx, args...)
		return err
	case rebaseIndex:
		return t.rebase(ctx, o)
	case promoteIndex:
		// --referrers copies the referrers (through the fallback tag here),
		// --digest-tags the cosign sha256-<digest>.sig style tags.
		_, err := t.exec(ctx, "image", "copy", "--referrers", "--digest-tags", o.Source, o.Target)
		return err
	}
	return fmt.Errorf("regctl %s: %w", o.opName(), errUnsupported)
}

// imgctl is this checkout, built into the bench bin directory, or with
// baseline set, the commit baseline of the same repository: the "before"
// row of a change measured in the same run as the "after".
type imgctl struct {
	cmdTool
	root     string // module root to build from
	verify   bool   // leave imgctl's post-push verification on
	baseline string // a git revision to build instead of the checkout
	version  string
}

func (t *imgctl) Name() string {
	if t.baseline != "" {
		return "imgctl@" + t.baseline
	}
	if t.verify {
		return "imgctl+verify"
	}
	return "imgctl"
}

func (t *imgctl) Version() string { return t.version }

// Install builds imgctl from the checkout, or from the baseline commit
// exported with git archive; the Go build cache makes repeats cheap.
func (t *imgctl) Install(ctx context.Context, binDir string) error {
	t.bin, t.version = filepath.Join(binDir, "imgctl"), checkoutVersion(ctx, t.root)
	dir := t.root
	if t.baseline != "" {
		var err error
		if dir, err = exportRevision(ctx, t.root, t.baseline, binDir); err != nil {
			return err
		}
		t.bin, t.version = filepath.Join(binDir, "imgctl-"+slug(t.baseline)), "commit "+t.baseline
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", t.bin, "./cmd/imgctl")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building imgctl %s: %w: %s", t.version, err, tail(string(out), 5))
	}
	return nil
}

// exportRevision writes the tree of rev (a commit of the repository at
// root) into a fresh directory under binDir with git archive, and returns it.
func exportRevision(ctx context.Context, root, rev, binDir string) (string, error) {
	dir := filepath.Join(binDir, "src-"+slug(rev))
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	archive := exec.CommandContext(ctx, "git", "-C", root, "archive", "--format=tar", rev)
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err
	}
	untar.Stdin = pipe
	var errb bytes.Buffer
	archive.Stderr = &errb
	if err := untar.Start(); err != nil {
		return "", err
	}
	aerr := archive.Run()
	if err := errors.Join(aerr, untar.Wait()); err != nil {
		return "", fmt.Errorf("exporting imgctl %s: %w: %s", rev, err, tail(errb.String(), 3))
	}
	return dir, nil
}

// Configure does nothing: imgctl uses plain HTTP for 127.0.0.1 by contract.
func (*imgctl) Configure(context.Context, string) error { return nil }

func (t *imgctl) Run(ctx context.Context, o op) error {
	args, err := imgctlArgs(o, t.verify)
	if err != nil {
		return err
	}
	_, err = t.exec(ctx, args...)
	// Exit 1 means the index was pushed and verify reported findings (such
	// as no ltsc2022 variant in a merge of ltsc2025 only): the work is done.
	if exit := (*exec.ExitError)(nil); t.verify && errors.As(err, &exit) && exit.ExitCode() == 1 {
		return nil
	}
	return err
}

// imgctlArgs is the imgctl command line for o. Without verify it passes
// --no-verify, since the peers do not check what they pushed either.
func imgctlArgs(o op, verify bool) ([]string, error) {
	switch o := o.(type) {
	case indexCreate:
		args := []string{"index", "create"}
		if !verify {
			args = append(args, "--no-verify")
		}
		args = append(args, "-t", o.Target)
		return append(args, o.Sources...), nil
	case rebaseIndex:
		args := []string{"rebase"}
		if !verify {
			args = append(args, "--no-verify")
		}
		return append(args, o.Source, "-t", o.Target), nil
	case promoteIndex:
		return []string{"promote", "--policy", o.Policy, "--key", o.Key, o.Source, o.Target}, nil
	}
	return nil, fmt.Errorf("imgctl %s: %w", o.opName(), errUnsupported)
}

// checkoutVersion describes the checkout: the commit and whether the tree is dirty.
func checkoutVersion(ctx context.Context, root string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", root, "describe", "--always", "--dirty").Output()
	if err != nil {
		return "devel"
	}
	return "checkout " + strings.TrimSpace(string(out))
}

// rebase runs crane rebase once per variant, since crane does not rebase
// an index, each into a tag of the target repository, then merges the
// results with crane index append as the index create case does.
func (t *crane) rebase(ctx context.Context, o rebaseIndex) error {
	repo, _, _ := strings.Cut(o.Target, ":merged")
	args := []string{"--insecure", "index", "append", "-t", o.Target}
	for _, v := range o.Variants {
		tag := repo + ":rebased-" + slug(v.Platform)
		if _, err := t.exec(ctx, "--insecure", "rebase", v.Image, "--old_base", v.OldBase, "--new_base", v.NewBase, "-t", tag); err != nil {
			return err
		}
		args = append(args, "-m", tag)
	}
	_, err := t.exec(ctx, args...)
	return err
}

// rebase runs regctl image mod --rebase once per variant, then merges the
// results with regctl index create. On the index itself `--rebase` fails:
// regctl reads the base annotations of the top manifest only (the index,
// which has none), and one --rebase-ref pair cannot name both a Windows
// and a Linux base.
func (t *regctl) rebase(ctx context.Context, o rebaseIndex) error {
	repo, _, _ := strings.Cut(o.Target, ":merged")
	args := []string{"index", "create", o.Target}
	for _, v := range o.Variants {
		tag := repo + ":rebased-" + slug(v.Platform)
		if _, err := t.exec(ctx, "image", "mod", v.Image, "--rebase", "--create", tag); err != nil {
			return err
		}
		args = append(args, "--ref", tag)
	}
	_, err := t.exec(ctx, args...)
	return err
}

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
