package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"

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
