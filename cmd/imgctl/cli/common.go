package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/imgctl/imgctl/registry"
	"github.com/spf13/cobra"
)

// registry returns the registry client of one command run: the one
// handshake per registry, retry policy and request count of the run.
func (o *rootOptions) registry(opts ...registry.Option) *registry.Client {
	return registry.New(append([]registry.Option{registry.WithInsecure(o.insecure)}, opts...)...)
}

// fetch reads the manifest a reference points at: an index or an image.
func fetch(cmd *cobra.Command, rc *registry.Client, s string) (*registry.Fetched, error) {
	ref, err := rc.ParseReference(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return rc.Fetch(cmd.Context(), ref)
}

// writeJSON prints v indented, with a trailing newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// splitList splits comma-separated and repeated flag values.
func splitList(in []string) []string {
	var out []string
	for _, s := range in {
		for p := range strings.SplitSeq(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func shortDigest(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}
