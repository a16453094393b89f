// Package cli holds imgctl's cobra commands, one file per verb. NewRootCmd
// builds a fresh tree with no package state, so tests run many in one
// process.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/build/buildx"
	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/build/variant"
	idx "github.com/imgctl/imgctl/index"
	"github.com/imgctl/imgctl/internal/ghactions"
	"github.com/imgctl/imgctl/policy"
	"github.com/imgctl/imgctl/rebase"
	"github.com/imgctl/imgctl/registry"
)

// Exit codes of the CLI contract.
const (
	ExitOK     = 0
	ExitFailed = 1 // the check failed: findings, or nothing matches
	ExitError  = 2 // usage, network or registry error
)

// ErrCheckFailed marks a run whose check failed (exit 1).
var ErrCheckFailed = errors.New("check failed")

// ErrUsage marks bad command-line input (exit 2).
var ErrUsage = errors.New("usage")

// rootOptions are the flags every command shares.
type rootOptions struct {
	output   string
	insecure bool
	verbose  bool
	// github turns on GitHub Actions output (github.go): set by --github,
	// else by GITHUB_ACTIONS=true.
	github bool
	stdin  io.Reader
	// stderr is the run's error stream, for the registry clients' logger.
	stderr io.Writer

	mu      sync.Mutex
	clients []*registry.Client // every registry client of the run, for the request count
}

// NewRootCmd builds a fresh imgctl command tree.
func NewRootCmd() *cobra.Command {
	root, _ := newRoot()
	return root
}

// newRoot builds the tree and returns the options every verb shares.
func newRoot() (*cobra.Command, *rootOptions) {
	o := &rootOptions{}
	root := &cobra.Command{
		Use:           "imgctl",
		Short:         "Build, merge, verify and publish multi-platform images with Windows variants",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed(githubFlag) {
				o.github = ghactions.InActions(os.Getenv)
			}
			o.stderr = cmd.ErrOrStderr()
			warnRenamed(cmd)
			return checkOutput(cmd, o.output)
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return fmt.Errorf("%w: %w", ErrUsage, err) })
	pf := root.PersistentFlags()
	pf.StringVarP(&o.output, "output", "o", "text", "output format: text or json; sarif for lint and check-workload")
	pf.BoolVar(&o.github, githubFlag, false, "GitHub Actions output: findings as workflow annotations, a Markdown step summary appended to $GITHUB_STEP_SUMMARY (default true when GITHUB_ACTIONS=true)")
	pf.BoolVar(&o.insecure, "insecure", false, "allow plain HTTP and unverified TLS for registries that are not on loopback")
	pf.BoolVarP(&o.verbose, "verbose", "v", false, "log progress and request counts to stderr")
	root.AddCommand(
		newResolveCmd(o),
		newVerifyCmd(o),
		newInspectCmd(o),
		newIndexCmd(o),
		newSignCmd(o), newKeygenCmd(o), newPromoteCmd(o),
		newBuildCmd(o), newBakeCmd(o), newLintCmd(o),
		newBasesCmd(o),
		newRebaseCmd(o), newPatchCmd(o),
		newCheckWorkloadCmd(o),
		newVersionCmd(o),
	)
	return root, o
}

// Execute runs imgctl with args and returns the process exit code.
func Execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root, o := newRoot()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	o.printRequests(cmd, stderr)
	err = flagHint(cmd, err)
	// A bare ErrCheckFailed means the command already printed its report.
	if err != nil && err != ErrCheckFailed { //nolint:errorlint // identity is the point

		fmt.Fprintf(stderr, "imgctl: %v\n", err)
	}
	return ExitCode(err)
}

// ExitCode maps an error from a command to the contract's exit code.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrCheckFailed):
		return ExitFailed
	default:
		return ExitError
	}
}

// logger returns the command's logger: stderr, debug level with --verbose,
// warnings only otherwise.
func (o *rootOptions) logger(cmd *cobra.Command) *slog.Logger {
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
}

// registry returns the registry client of one command run: the one
// handshake per registry, retry policy and request count of the run. With
// --verbose its requests are logged at debug level to stderr, and the
// root command prints the run's request count once it ends.
func (o *rootOptions) registry(opts ...registry.Option) *registry.Client {
	base := []registry.Option{registry.WithInsecure(o.insecure)}
	if o.verbose && o.stderr != nil {
		base = append(base, registry.WithLogger(slog.New(slog.NewTextHandler(o.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}
	rc := registry.New(append(base, opts...)...)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.clients = append(o.clients, rc)
	return rc
}

// printRequests prints, with --verbose, how many registry requests the
// command made, once, whatever the verb and whether it failed.
func (o *rootOptions) printRequests(cmd *cobra.Command, w io.Writer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.verbose || cmd == nil || len(o.clients) == 0 {
		return
	}
	var n int64
	for _, rc := range o.clients {
		n += rc.Requests()
	}
	fmt.Fprintf(w, "%s: %d registry requests\n", cmd.CommandPath(), n)
}

// flagHints are the flags that answer a library's refusal. Libraries
// return sentinels and name no flag; the CLI names the flag, only on a
// verb that has it.
var flagHints = []struct {
	err        error
	flag, hint string
}{
	{registry.ErrTagExists, "force", "use --force to overwrite it"},
	{rebase.ErrBuildChange, "allow-build-change", "use --allow-build-change to move it"},
	{idx.ErrDuplicatePlatform, "prefer", "use --prefer newest to keep the newest of each"},
	{registry.ErrPlainHTTP, "insecure", "use --insecure"},
	{policy.ErrSignedAllWithoutKey, "key", "give --key, or keys in the policy"},
	{buildx.ErrUnknownInstance, "builder", "--builder takes an instance name or an address with ://"},
	{nodes.ErrNoBuilderGiven, "builder", "give the daemon's address with --builder or $BUILDKIT_HOST"},
	{nodes.ErrUnmappedPlatforms, "node", "map them with --node PLATFORM=ADDR or --builders, or give --builder for the rest"},
	{nodes.ErrCertWithoutKey, "tlscert", "give both --tlscert and --tlskey"},
	{nodes.ErrTLSForInstance, "tlscacert", "drop --tlscacert, --tlscert, --tlskey and --tls-server-name"},
	{variant.ErrNeedReleases, "windows", "name them with --windows, e.g. --windows ltsc2022,ltsc2025"},
	{variant.ErrReleasesWithoutWindows, "platform", "add windows/amd64 to --platform"},
	{variant.ErrUnknownRelease, "windows", "check --windows"},
	{variant.ErrBaseNotBuilt, "windows-base", "--windows-base names only releases that --windows builds"},
}

// flagHint adds to err the flag of cmd that answers it (flagHints). A
// registry's own immutability rule is not answered by --force.
func flagHint(cmd *cobra.Command, err error) error {
	var immutable *registry.ImmutableTagError
	if err == nil || cmd == nil || errors.As(err, &immutable) {
		return err
	}
	for _, h := range flagHints {
		if errors.Is(err, h.err) && cmd.Flag(h.flag) != nil {
			return fmt.Errorf("%w; %s", err, h.hint)
		}
	}
	return err
}
