package cli

import (
	"fmt"
	"text/tabwriter"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// inspectOptions are the flags of inspect: none beyond the root's.
type inspectOptions struct{}

func newInspectCmd(ro *rootOptions) *cobra.Command {
	o := &inspectOptions{}
	return &cobra.Command{
		Use:   "inspect REF",
		Short: "Print the platform table of an index (-o json: the raw manifest)",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return o.run(cmd, ro, args) },
	}
}

// run runs the verb with the parsed flags.
func (o *inspectOptions) run(cmd *cobra.Command, ro *rootOptions, args []string) error {
	f, err := fetch(cmd, ro.registry(), args[0])
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if ro.output == "json" {
		_, err := w.Write(append(f.Desc.Manifest, '\n'))
		return err
	}
	rows, err := inspectRows(f)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s@%s (%s)\n", f.Ref, f.Desc.Digest, f.Desc.MediaType)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLATFORM\tOS.VERSION\tLTSC\tDIGEST\tSIZE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", r.platform, r.osVersion, r.ltsc, r.digest, r.size)
	}
	return tw.Flush()
}

// inspectRows describes each child; an entry without a platform shows its
// config's platform, marked "(config)".
func inspectRows(f *registry.Fetched) ([]row, error) {
	if f.Image != nil {
		s, err := snapshot.LoadImage(f.Image)
		if err != nil {
			return nil, err
		}
		return []row{newRow(s.Entries[0].ConfigPlatform(), "", s.Entries[0].Descriptor)}, nil
	}
	im, err := f.Index.IndexManifest()
	if err != nil {
		return nil, err
	}
	var out []row
	for _, d := range im.Manifests {
		p, mark := d.Platform, ""
		if e := (snapshot.Entry{Descriptor: d}); e.IsAttestation() {
			out = append(out, row{"attestation→" + shortDigest(d.Annotations[snapshot.AnnotationReferenceDigest]), "-", "-", d.Digest.String(), d.Size})
			continue
		}
		if p == nil && d.MediaType.IsImage() {
			img, err := f.Index.Image(d.Digest)
			if err != nil {
				return nil, err
			}
			cf, err := img.ConfigFile()
			if err != nil {
				return nil, fmt.Errorf("reading config of %s: %w", d.Digest, err)
			}
			p, mark = cf.Platform(), " (config)"
		}
		out = append(out, newRow(p, mark, d))
	}
	return out, nil
}

type row struct {
	platform, osVersion, ltsc, digest string
	size                              int64
}

func newRow(p *platform.Platform, mark string, d v1.Descriptor) row {
	r := row{platform: platform.FormatPtr(p), digest: d.Digest.String(), size: d.Size}
	if p != nil {
		q := *p
		q.OSVersion = ""
		r.platform = platform.Format(q) + mark
		r.osVersion = p.OSVersion
		r.ltsc = platform.ReleaseName(p.OSVersion)
	}
	if r.osVersion == "" {
		r.osVersion = "-"
	}
	if r.ltsc == "" {
		r.ltsc = "-"
	}
	return r
}
