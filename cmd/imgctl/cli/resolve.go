package cli

import (
	"errors"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/verify"
)

type resolveOptions struct {
	platform string
	engine   string
}

func newResolveCmd(ro *rootOptions) *cobra.Command {
	o := &resolveOptions{}
	cmd := &cobra.Command{
		Use:   "resolve REF --platform PLATFORM",
		Short: "Print the digest of the child manifest an engine pulls for a platform",
		Example: `  imgctl resolve registry.example.com/app:1.0 --platform windows/amd64:10.0.26100.2894
  imgctl resolve registry.example.com/app:1.0 --platform 'windows(10.0.20348)/amd64' --engine containerd@2.0.4 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, ro, args) },
	}
	cmd.Flags().StringVar(&o.platform, "platform", "", "node platform: os/arch[/variant][:os.version] or windows(10.0.20348)/amd64")
	cmd.Flags().StringVar(&o.engine, "engine", platform.Containerd, engineFlagHelp)
	_ = cmd.MarkFlagRequired("platform")
	return cmd
}

// run runs the verb with the parsed flags.
func (o *resolveOptions) run(cmd *cobra.Command, ro *rootOptions, args []string) error {
	host, err := platform.Parse(o.platform)
	if err != nil {
		return fmt.Errorf("%w: --platform: %w", ErrUsage, err)
	}
	es, err := parseEngines([]string{o.engine}, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	e := es[0]
	rc := ro.registry()
	f, err := fetch(cmd, rc, args[0])
	if err != nil {
		return err
	}
	var d v1.Descriptor
	if f.Index != nil {
		d, err = verify.ResolveIndex(f.Index, host, e)
	} else {
		d, err = verify.ResolveImage(f.Image, host, e)
	}
	if errors.Is(err, verify.ErrNoMatch) {
		return fmt.Errorf("%s: %w: %w", f.Ref, ErrCheckFailed, err)
	}
	if err != nil {
		return err
	}
	if ro.output == "json" {
		return writeJSON(cmd.OutOrStdout(), struct {
			Digest   string             `json:"digest"`
			Platform *platform.Platform `json:"platform"`
			Engine   string             `json:"engine"`
		}{d.Digest.String(), d.Platform, e.Name()})
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), d.Digest)
	return err
}
