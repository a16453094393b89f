package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// fetch reads the manifest a reference points at: an index or an image.
func fetch(cmd *cobra.Command, rc *registry.Client, s string) (*registry.Fetched, error) {
	ref, err := rc.ParseReference(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return rc.Fetch(cmd.Context(), ref)
}

// loadSnapshot reads what f fetched as a snapshot: an index with its
// children's manifests and configs (at most concurrency reads at once),
// or an image.
func loadSnapshot(ctx context.Context, f *registry.Fetched, concurrency int) (*snapshot.Snapshot, error) {
	if f.Index != nil {
		return snapshot.LoadIndex(ctx, f.Index, concurrency)
	}
	return snapshot.LoadImage(f.Image)
}

// writeJSON prints v indented, with a trailing newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func shortDigest(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}

// renamedFlag adds old as a hidden alias of the flag now spelled name: it
// sets the same value, and the root command warns on stderr when it is
// used (warnRenamed; pflag's own deprecation notice would go to the
// command's output stream, which may be JSON).
// The flags renamed so far: --target of verify, index and rebase, which
// named Windows builds, is --windows, as on build (--target is the
// Dockerfile stage there, as in buildx); --concurrency of verify and
// check-workload is --jobs, as on index and rebase.
func renamedFlag(fl *pflag.FlagSet, old, name string) {
	f := fl.Lookup(name)
	fl.AddFlag(&pflag.Flag{Name: old, Usage: f.Usage, Value: f.Value, DefValue: f.DefValue, Hidden: true,
		Annotations: map[string][]string{renamedAnnotation: {name}}})
}

// renamedAnnotation marks an alias renamedFlag added, with the new name.
const renamedAnnotation = "imgctl-renamed-to"

// warnRenamed warns, on stderr, of each old flag spelling the command line
// used.
func warnRenamed(cmd *cobra.Command) {
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if to := f.Annotations[renamedAnnotation]; len(to) == 1 {
			fmt.Fprintf(cmd.ErrOrStderr(), "imgctl: warning: --%s is deprecated, use --%s\n", f.Name, to[0])
		}
	})
}
