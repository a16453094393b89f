package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/internal/regclient"
)

// registry returns the registry client settings for one command run.
func (o *rootOptions) registry() *regclient.Options {
	return &regclient.Options{Insecure: o.insecure}
}

// fetched is a reference read from a registry: an index or a single image.
type fetched struct {
	ref   name.Reference
	desc  *remote.Descriptor
	index v1.ImageIndex
	image v1.Image
}

// fetch reads the manifest a reference points at.
func fetch(cmd *cobra.Command, rc *regclient.Options, s string) (*fetched, error) {
	ref, err := rc.ParseReference(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	desc, err := remote.Get(ref, rc.Remote(cmd.Context())...)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", ref, err)
	}
	f := &fetched{ref: ref, desc: desc}
	if desc.MediaType.IsIndex() {
		f.index, err = desc.ImageIndex()
	} else if desc.MediaType.IsImage() {
		f.image, err = desc.Image()
	} else {
		err = fmt.Errorf("unsupported media type %q", desc.MediaType)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ref, err)
	}
	return f, nil
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
