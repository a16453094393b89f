package cli

import (
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/sign"
)

type signOptions struct {
	key                  string
	recursive, referrers bool
}

func newSignCmd(ro *rootOptions) *cobra.Command {
	o := &signOptions{}
	cmd := &cobra.Command{
		Use:   "sign REF --key cosign.key",
		Short: "Sign an index (and with --recursive every child) with a cosign key, offline",
		Long: `sign resolves REF to its digest and writes a cosign signature of that digest
to the sha256-<digest>.sig tag of its repository, where cosign verify looks.
With --recursive it signs every child manifest too, attestations included.
With --referrers it also stores each signature as an OCI 1.1 referrer, and
fails first when the registry does not serve the referrers API.

The key is an encrypted cosign private key (imgctl keygen, or cosign
generate-key-pair); its password comes from COSIGN_PASSWORD, or a prompt.
Nothing is uploaded to a transparency log: check the signatures with imgctl
verify --key, or cosign verify --key cosign.pub --insecure-ignore-tlog.`,
		Example: `  COSIGN_PASSWORD=... imgctl sign registry.example.com/app:1.0 --key cosign.key --recursive`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.key == "" {
				return fmt.Errorf("%w: --key is required", ErrUsage)
			}
			rc := ro.registry()
			ref, err := rc.ParseReference(args[0])
			if err != nil {
				return fmt.Errorf("%w: %w", ErrUsage, err)
			}
			pem, err := os.ReadFile(o.key)
			if err != nil {
				return fmt.Errorf("reading private key: %w", err)
			}
			pw, err := password(cmd, false)
			if err != nil {
				return err
			}
			signer, err := sign.LoadPrivateKey(pem, pw)
			if err != nil {
				return fmt.Errorf("loading %s: %w", o.key, err)
			}
			ctx := cmd.Context()
			rc.Scope(nil, []name.Repository{ref.Context()})
			desc, err := rc.Describe(ctx, ref)
			if err != nil {
				return fmt.Errorf("resolving %s: %w", ref, err)
			}
			d := ref.Context().Digest(desc.Digest.String())
			res, err := sign.Sign(ctx, d, signer, sign.Options{Registry: rc, Recursive: o.recursive,
				Referrers: o.referrers, Logger: ro.logger(cmd)})
			if err != nil {
				return err
			}
			signed := make([]string, len(res.Digests))
			for i, h := range res.Digests {
				signed[i] = h.String()
			}
			w := cmd.OutOrStdout()
			if ro.output == "json" {
				return writeJSON(w, map[string]any{"ref": ref.String(), "digest": d.DigestStr(), "signed": signed, "referrers": o.referrers})
			}
			for _, s := range signed {
				fmt.Fprintf(w, "signed %s@%s\n", d.Context(), s)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.key, "key", "", "encrypted cosign private key (required)")
	fl.BoolVar(&o.recursive, "recursive", false, "also sign every child manifest of an index")
	fl.BoolVar(&o.referrers, "referrers", false, "also store the signatures as OCI 1.1 referrers (needs the referrers API)")
	return cmd
}
