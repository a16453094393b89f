package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/build/buildx"
	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/internal/testing/buildtest"
	"github.com/imgctl/imgctl/policy"
	"github.com/imgctl/imgctl/registry"
)

// TestFlagHints: a library's sentinel gets the flag that answers it, on
// the verbs of imgctl's own command tree that have the flag, and nothing
// on a verb without it; library messages name no flag themselves.
func TestFlagHints(t *testing.T) {
	root := NewRootCmd()
	verb := func(name string) *cobra.Command {
		c, _, err := root.Find(strings.Fields(name))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, c := range []struct {
		verb string
		err  error
		want string // "" for no hint
	}{
		{"inspect", registry.ErrPlainHTTP, "; use --insecure"},
		{"verify", policy.ErrSignedAllWithoutKey, "; give --key, or keys in the policy"},
		{"lint", policy.ErrSignedAllWithoutKey, ""},
		{"verify", registry.ErrTagExists, ""},
		{"index create", registry.ErrTagExists, "; use --force to overwrite it"},
		{"promote", registry.ErrTagExists, ""},
		{"build", buildx.ErrUnknownInstance, "; --builder takes an instance name or an address with ://"},
		{"build", nodes.ErrCertWithoutKey, "; give both --tlscert and --tlskey"},
		{"verify", nodes.ErrCertWithoutKey, ""},
		{"build", nodes.ErrTLSForInstance, "; drop --tlscacert, --tlscert, --tlskey and --tls-server-name"},
		{"build", nodes.ErrUnmappedPlatforms, "; map them with --node PLATFORM=ADDR or --builders, or give --builder for the rest"},
		{"bake", nodes.ErrNoBuilderGiven, "; give the daemon's address with --builder or $BUILDKIT_HOST"},
		{"build", nodes.ErrNoBuilder, ""},
		{"build", variant.ErrNeedReleases, "; name them with --windows, e.g. --windows ltsc2022,ltsc2025"},
		{"bake", variant.ErrNeedReleases, ""},
		{"lint", variant.ErrReleasesWithoutWindows, "; add windows/amd64 to --platform"},
	} {
		err := fmt.Errorf("reading x: %w", c.err)
		got := flagHint(verb(c.verb), err).Error()
		if want := err.Error() + c.want; got != want {
			t.Errorf("%s: %q, want %q", c.verb, got, want)
		}
		if !errors.Is(flagHint(verb(c.verb), err), c.err) {
			t.Errorf("%s: the hint lost the sentinel", c.verb)
		}
		if strings.Contains(c.err.Error(), "--") {
			t.Errorf("%v names a flag", c.err)
		}
	}
}

// TestVariantHintsThroughTheCLI: the build variant planner's refusals
// reach the user of lint with the flag that answers them, exit 2.
func TestVariantHintsThroughTheCLI(t *testing.T) {
	root, err := buildtest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	hello := filepath.Join(root, "examples", "hello")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--platform", "linux/amd64", "--windows", "ltsc2022"}, "Windows releases need windows/amd64 among the platforms; add windows/amd64 to --platform"},
		{[]string{"--windows", "ltsc2030"}, `unknown Windows release "ltsc2030": want ltsc2019, ltsc2022, ltsc2025; check --windows`},
		{[]string{"--windows", "ltsc2022", "--windows-base", "ltsc2025=reg.example/nanoserver:ltsc2025"},
			"a Windows base for a release that is not built: ltsc2025; --windows-base names only releases that --windows builds"},
	} {
		_, errOut, code := run(t, append(append([]string{"lint"}, c.args...), hello)...)
		if code != ExitError || !strings.Contains(errOut, c.want) {
			t.Errorf("lint %v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}
