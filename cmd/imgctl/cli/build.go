package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/util/progress/progressui"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/imgctl/imgctl/bake"
	"github.com/imgctl/imgctl/build"
	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/build/skeleton"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/verify"
)

// buildOptions are the flags of imgctl build beyond the variant flags.
type buildOptions struct {
	variantFlags
	nodeFlags
	builder, progress, metadataFile, syntaxImage        string
	skeletonCache                                       string
	provenance, sbom                                    string
	tls                                                 nodes.TLSOptions
	tags, secrets, ssh, cacheFrom, cacheTo, annotations []string
	force, noCache, noVerify, windowsPlain              bool
}

func newBuildCmd(ro *rootOptions) *cobra.Command {
	o := &buildOptions{}
	cmd := &cobra.Command{
		Use:   "build -t TAG [flags] CONTEXT",
		Short: "Build Linux and Windows variants on BuildKit into one verified tag",
		Long: `build lints the Dockerfile for every variant, then drives a BuildKit daemon
(--builder, else $BUILDKIT_HOST, else $BUILDX_BUILDER, else buildx's current
instance) with its built-in Dockerfile frontend: one solve
for the Linux platforms and one per Windows release (--windows), each FROM its own
base (the WINDOWS_BASE build arg), concurrently. The results are merged into one
index at TAG with every Windows os.version, each manifest annotated with its base
(org.opencontainers.image.base.name/digest), and verified. TAG is never
overwritten without --force. The bases are resolved and pinned through the
builder, as it will pull them: with its registry mirrors and TLS settings and
the credentials of the Docker config. When imgctl has to read a base from its
registry itself, it says so in a note on stderr.

A build can spread over several BuildKit daemons: --node PLATFORM=ADDR (or a
--builders file) maps platforms to nodes, e.g. a Linux pool and a Windows node
running buildkitd.exe. Each node solves its platforms concurrently, progress
from all of them shows in one view, and the results are merged into one index.
Platforms without a node go to --builder or $BUILDKIT_HOST. A RUN in a Windows
stage is allowed only on a --node windows... whose daemon has a Windows worker.

--builder takes a BuildKit address (any value with "://": unix://, tcp://,
docker-container://NAME) or the name of a builder instance made by
"docker buildx create" (drivers remote, docker-container, kubernetes), read
from buildx's store ($BUILDX_CONFIG, else $DOCKER_CONFIG/buildx) and reached
through buildx's own drivers, which start a stopped instance as buildx does.
Each platform an instance's node was created with (--platform) goes to that
node; the first node builds the rest. --builders entries and --node win for
their platforms. An unknown name is a usage error (exit 2) that lists the
instances. Without --builder: $BUILDKIT_HOST (an address), else
$BUILDX_BUILDER (an instance name), else the instance "docker buildx use"
made current for the current Docker context, else ` + nodes.DefaultBuilderAddress + `.

Every image gets a SLSA provenance attestation (--provenance, mode=min by
default as with buildx; false for none), and with --sbom an SPDX SBOM made by a
scanner image that BuildKit runs on its Linux worker, for Windows variants too.
The attestation manifests are merged into the index next to their images.
--sbom makes the builder download every base: the scanner reads whole images.
Each Windows image's SBOM also names its OS (product, os.version, CPE) and its
base by digest as its ancestor. --sbom=base=reference records a Windows base by
reference instead of scanning it, which keeps the graft (docs/sbom-windows.md).
Exit 0 on success, 1 on lint findings or a failed
verify, 2 on usage, builder, build or registry errors.`,
		Example: `  imgctl build -t reg.example.com/hello:1.0 --windows ltsc2022,ltsc2025 examples/hello
  imgctl build --builder tcp://buildkitd:1234 --tlscacert ca.pem --tlscert cert.pem --tlskey key.pem \
    -t reg.example.com/hello:1.0 --windows-base-template reg.example.com/nanoserver:{ltsc} \
    --windows ltsc2022,ltsc2025 --metadata-file build.json .
  imgctl build --node linux/amd64=tcp://bk-amd64:1234 --node linux/arm64=tcp://bk-arm64:1234 \
    --node windows=tcp://bk-win:1234 --tlscacert ca.pem --tlscert cert.pem --tlskey key.pem \
    -t reg.example.com/hello:1.0 --windows ltsc2022 .
  imgctl build --builders builders.yaml -t reg.example.com/hello:1.0 --windows ltsc2022,ltsc2025 .
  docker buildx create --name pool --driver remote --platform linux/amd64,linux/arm64 tcp://bk-linux:1234
  docker buildx create --name pool --append --node pool-win --platform windows/amd64 tcp://bk-win:1234
  imgctl build --builder pool -t reg.example.com/hello:1.0 --windows ltsc2022 .`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, ro, args[0]) },
	}
	fl := cmd.Flags()
	o.variantFlags.add(fl)
	o.addBuilderFlags(fl)
	o.addRunFlags(fl)
	fl.StringArrayVarP(&o.tags, "tag", "t", nil, "tag to push the index to, repeatable in one repository (required; never overwritten without --force)")
	addForceFlag(fl, &o.force)
	fl.StringArrayVar(&o.secrets, "secret", nil, "secret for RUN --mount=type=secret: id=ID,src=PATH or id=ID,env=VAR")
	fl.StringArrayVar(&o.ssh, "ssh", nil, "SSH agent or keys for RUN --mount=type=ssh: default or ID=PATH[,PATH]")
	fl.StringArrayVar(&o.cacheFrom, "cache-from", nil, "cache import, e.g. type=registry,ref=REG/app:cache")
	fl.StringArrayVar(&o.cacheTo, "cache-to", nil, "cache export, e.g. type=registry,ref=REG/app:cache,mode=max (one ref per variant: REF-VARIANT)")
	fl.BoolVar(&o.noCache, "no-cache", false, "do not use BuildKit's cache")
	fl.StringVar(&o.skeletonCache, "skeleton-cache", "", "repository of the registry cache of Windows base skeletons (default: the tag's repository, as imgctl-skeleton-v1-* tags); "+
		"read only if this build may write it: whoever writes it decides the directory metadata of the Windows stages' layers")
	fl.BoolVar(&o.windowsPlain, "windows-plain", false, "build Windows variants on BuildKit's plain path, which downloads and unpacks each base, instead of grafting the stage's layers onto it")
	fl.StringVar(&o.syntaxImage, "syntax-image", "", "Dockerfile frontend image to use (default: the daemon's built-in frontend; # syntax= lines are ignored)")
	fl.StringArrayVar(&o.annotations, "annotation", nil, "index annotation key=value, repeatable")
	fl.StringVar(&o.provenance, "provenance", "mode=min", "SLSA provenance attestation per image: mode=min, mode=max (min, max; true or fields without a mode = max, as buildx), false for none; builder-id=URI names the builder")
	fl.StringVar(&o.sbom, "sbom", "", "SPDX SBOM attestation per image: --sbom (BuildKit's default scanner), --sbom=generator=IMAGE, --sbom=false; downloads every base unless base=reference (--sbom=base=reference: Windows bases by reference)")
	fl.Lookup("sbom").NoOptDefVal = "true"
	return cmd
}

// addBuilderFlags adds the flags that pick the daemons, which build and
// bake share: --builder, the --tls* flags, --node and --builders.
func (o *buildOptions) addBuilderFlags(fl *pflag.FlagSet) {
	o.nodeFlags.add(fl)
	fl.StringVar(&o.builder, "builder", "", "BuildKit address (unix://, tcp://, docker-container://NAME: any value with ://) or a buildx builder instance name (docker buildx create; drivers remote, docker-container, kubernetes); default $BUILDKIT_HOST, else the instance $BUILDX_BUILDER, else the instance docker buildx use made current, else "+nodes.DefaultBuilderAddress)
	fl.StringVar(&o.tls.CACert, "tlscacert", "", "CA certificate of a tcp:// builder")
	fl.StringVar(&o.tls.Cert, "tlscert", "", "client certificate for a tcp:// builder")
	fl.StringVar(&o.tls.Key, "tlskey", "", "client key for a tcp:// builder")
	fl.StringVar(&o.tls.ServerName, "tls-server-name", "", "server name to check in the builder's certificate")
}

// addRunFlags adds the flags about a run's output that build and bake
// share: --progress, --metadata-file and --no-verify.
func (o *buildOptions) addRunFlags(fl *pflag.FlagSet) {
	fl.StringVar(&o.progress, "progress", "auto", "progress output: auto, plain, tty, quiet or rawjson (on stderr)")
	fl.StringVar(&o.metadataFile, "metadata-file", "", "write the index and per-platform digests as JSON to this file")
	addNoVerifyFlag(fl, &o.noVerify)
}

// options turns the flags into build.Options; errors wrap ErrUsage.
func (o *buildOptions) options(cmd *cobra.Command, ro *rootOptions, contextDir string) (build.Options, error) {
	bo, err := o.variantFlags.options(contextDir)
	if err != nil {
		return bo, err
	}
	rc := ro.registry()
	tag, also, err := parseTags(rc, o.tags)
	if err != nil {
		return bo, err
	}
	bo.Tag, bo.AlsoTags, bo.Force, bo.NoCache, bo.SyntaxImage = tag, also, o.force, o.noCache, o.syntaxImage
	bo.WindowsPlain, bo.SkeletonRepository = o.windowsPlain, o.skeletonCache
	if err := o.runOptions(cmd, ro, rc, &bo); err != nil {
		return bo, err
	}
	if bo.Annotations, err = keyValues("--annotation", o.annotations, false); err != nil {
		return bo, err
	}
	if bo.Provenance, err = parseProvenance(o.provenance); err != nil {
		return bo, err
	}
	if bo.SBOM, err = parseSBOM(o.sbom); err != nil {
		return bo, err
	}
	if err := o.sessionOptions(&bo); err != nil {
		return bo, err
	}
	return bo, nil
}

// sessionOptions reads --secret, --ssh, --cache-from and --cache-to into
// bo with buildx's buildflags, through the conversions a bake target's
// entries go through too (package bake). Errors wrap ErrUsage and name the
// flag and its value.
func (o *buildOptions) sessionOptions(bo *build.Options) error {
	for _, s := range o.secrets {
		src, err := bake.ParseSecret(s)
		if err != nil {
			return fmt.Errorf("%w: --secret %q: %w", ErrUsage, s, err)
		}
		bo.Secrets = append(bo.Secrets, src)
	}
	for _, s := range o.ssh {
		c, err := bake.ParseSSH(s)
		if err != nil {
			return fmt.Errorf("%w: --ssh %q: %w", ErrUsage, s, err)
		}
		bo.SSH = append(bo.SSH, c)
	}
	for _, c := range []struct {
		flag string
		in   []string
		out  *[]client.CacheOptionsEntry
	}{{"--cache-from", o.cacheFrom, &bo.CacheFrom}, {"--cache-to", o.cacheTo, &bo.CacheTo}} {
		for _, s := range c.in {
			es, err := bake.ParseCache(s)
			if err != nil {
				return fmt.Errorf("%w: %s %q: %w", ErrUsage, c.flag, s, err)
			}
			*c.out = append(*c.out, es...)
		}
	}
	return nil
}

// runOptions sets in bo what build and bake share: the command's registry
// client, the builder and nodes, the skeleton cache directory, the logger
// and stderr; and it checks --progress. Errors wrap ErrUsage.
func (o *buildOptions) runOptions(cmd *cobra.Command, ro *rootOptions, rc *registry.Client, bo *build.Options) error {
	switch progressui.DisplayMode(o.progress) {
	case progressui.AutoMode, progressui.PlainMode, progressui.TtyMode, progressui.QuietMode, progressui.RawJSONMode:
	default:
		return fmt.Errorf("%w: --progress %q: want auto, plain, tty, quiet or rawjson", ErrUsage, o.progress)
	}
	bo.Registry, bo.SkeletonCache = rc, skeleton.CacheDir()
	if err := o.selectBuilder(cmd.Context(), bo, cmd.ErrOrStderr()); err != nil {
		return err
	}
	bo.Logger, bo.Stderr = ro.logger(cmd), cmd.ErrOrStderr()
	return nil
}

func (o *buildOptions) run(cmd *cobra.Command, ro *rootOptions, contextDir string) error {
	lockStderr(cmd)
	bo, err := o.options(cmd, ro, contextDir)
	if err != nil {
		return err
	}
	pr, err := startProgress(cmd, o.progress)
	if err != nil {
		return err
	}
	bo.Status, bo.Note = pr.status, pr.note
	res, err := build.Build(cmd.Context(), bo)
	pr.wait()
	stderr := cmd.ErrOrStderr()
	if pe := (*lint.Error)(nil); errors.As(err, &pe) {
		if perr := printFindings(cmd.OutOrStdout(), ro.output, pe.Findings[0].File, pe.Findings); perr != nil {
			return perr
		}
		ro.githubOutput(cmd).lint(pe.Findings[0].File, pe.Findings)
		return ErrCheckFailed
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "pushed %s@%s (%d images)\n", strings.Join(tagStrings(res.Index.Tags), ", "), res.Index.Digest, len(res.Platforms))
	meta := res.Metadata()
	if o.metadataFile != "" {
		if err := build.WriteMetadata(o.metadataFile, meta); err != nil {
			return err
		}
	}
	return o.report(cmd, ro, bo, res, meta)
}

// report verifies the pushed index with the build's Windows releases as
// targets and prints the result.
func (o *buildOptions) report(cmd *cobra.Command, ro *rootOptions, bo build.Options, res *build.Result, meta build.Metadata) error {
	var rep *verify.Report
	if !o.noVerify {
		var err error
		if rep, err = verifyBuilt(cmd, bo.Registry, bo.Variants.Windows, res); err != nil {
			return err
		}
	}
	w := cmd.OutOrStdout()
	var err error
	if ro.output == "json" {
		err = writeJSON(w, map[string]any{"index": meta.Index, "platforms": meta.Platforms, "verify": rep})
	} else {
		fmt.Fprintln(w, res.Index.Digest)
		if rep != nil {
			err = printReport(w, "text", rep)
		}
	}
	ro.githubOutput(cmd).verified("imgctl build "+code(res.Index.Tag.String()), metadataRows(meta), rep)
	if err == nil && rep != nil && !rep.Passed {
		return ErrCheckFailed
	}
	return err
}

// verifyBuilt verifies a pushed build's index with the Windows releases
// windows as targets and every built platform required.
func verifyBuilt(cmd *cobra.Command, rc *registry.Client, windows []string, res *build.Result) (*verify.Report, error) {
	targets, err := platform.ParseTargets(windows)
	if err != nil {
		return nil, fmt.Errorf("%w: --windows: %w", ErrUsage, err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "verifying %s\n", res.Index.Ref)
	return verifyPushed(cmd.Context(), rc, res.Index, verify.Options{Targets: targets, RequirePlatforms: builtPlatforms(res)})
}

// lockStderr makes the command's stderr safe for the progress display,
// notes and logs to share. A file stays one, so that --progress auto
// finds a terminal.
func lockStderr(cmd *cobra.Command) {
	if _, file := cmd.ErrOrStderr().(*os.File); !file {
		cmd.SetErr(&lockedWriter{w: cmd.ErrOrStderr()})
	}
}

// progress is a run's --progress display on stderr, and the notes that
// wait for it to finish, so as not to break into it.
type progress struct {
	status chan *client.SolveStatus
	drawn  chan struct{}
	stderr io.Writer
	mu     sync.Mutex
	notes  []string
}

// startProgress starts the display of mode; its status channel is for
// build.Options.Status (the build closes it), note for Options.Note.
func startProgress(cmd *cobra.Command, mode string) (*progress, error) {
	stderr := cmd.ErrOrStderr()
	display, err := progressui.NewDisplay(stderr, progressui.DisplayMode(mode))
	if err != nil {
		return nil, fmt.Errorf("%w: --progress: %w", ErrUsage, err)
	}
	p := &progress{status: make(chan *client.SolveStatus), drawn: make(chan struct{}), stderr: stderr}
	go func() {
		defer close(p.drawn)
		_, _ = display.UpdateFrom(cmd.Context(), p.status)
	}()
	return p, nil
}

// note keeps a note for wait to print; it may be called from several
// goroutines at once.
func (p *progress) note(n string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, n)
}

// wait waits for the display to finish (the status channel closed) and
// prints the notes, whether the build succeeded or not.
func (p *progress) wait() {
	<-p.drawn
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range p.notes {
		fmt.Fprintf(p.stderr, "note: %s\n", n)
	}
}

// builtPlatforms are the platforms verify requires: each variant's.
func builtPlatforms(res *build.Result) []platform.Platform {
	var out []platform.Platform
	for _, v := range res.Variants {
		out = append(out, v.Platforms...)
	}
	return out
}
