package cli

import (
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/cobra"

	"github.com/imgctl/imgctl/sign"
)

type signOptions struct {
	key                                string
	format                             string
	recursive, attestations, referrers bool
}

func newSignCmd(ro *rootOptions) *cobra.Command {
	o := &signOptions{}
	cmd := &cobra.Command{
		Use:   "sign REF --key cosign.key",
		Short: "Sign an index (and with --recursive its images) with a cosign key, offline",
		Long: `sign resolves REF to its digest and writes a cosign signature of that digest.
--format says where:
  legacy  cosign v2's (the default): appended to the sha256-<digest>.sig tag of
          the repository; cosign v2 and v3 both verify it offline with the key
          (cosign v3 reads the .sig tag when there is no bundle)
  bundle  cosign v3's: a Sigstore bundle (DSSE, in-toto statement with predicate
          https://sigstore.dev/cosign/sign/v1) stored as an OCI 1.1 referrer, or
          under the sha256-<digest> referrers tag on a registry without the API;
          cosign v2.6 refuses to verify it offline ("trusted root is required")
  both    both of them: for verifiers that read only bundles; cosign v2.6 then
          refuses offline too, as it takes the bundle path once it finds one
With --recursive it signs every image of the index too (not its attestation
manifests); --attestations signs the attestation manifests as well (and
implies --recursive: together they sign what cosign sign --recursive does).
With --referrers it also stores each legacy signature as an OCI 1.1
referrer, and fails first when the registry does not serve the referrers API.
A registry that holds the .sig or referrers tag immutable (ECR, Harbor, ACR)
refuses the write: sign exits 2 and names the tag.

The key is an encrypted cosign private key (imgctl keygen, or cosign
generate-key-pair); its password comes from COSIGN_PASSWORD, or a prompt.
Nothing is uploaded to a transparency log: check the signatures with imgctl
verify --key, or cosign verify --key cosign.pub --insecure-ignore-tlog.`,
		Example: `  COSIGN_PASSWORD=... imgctl sign registry.example.com/app:1.0 --key cosign.key --recursive
  imgctl sign registry.example.com/app:1.0 --key cosign.key --attestations --format legacy`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd, ro, args) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.key, "key", "", "encrypted cosign private key (required)")
	fl.StringVar(&o.format, "format", string(sign.DefaultFormat), "signature format: legacy (.sig tag), bundle (Sigstore bundle referrer) or both")
	fl.BoolVar(&o.recursive, "recursive", false, "also sign every image of an index (not its attestation manifests)")
	fl.BoolVar(&o.attestations, "attestations", false, "also sign every attestation manifest of an index (implies --recursive)")
	fl.BoolVar(&o.referrers, "referrers", false, "also store the legacy signatures as OCI 1.1 referrers (needs the referrers API)")
	return cmd
}

// run runs the verb with the parsed flags.
func (o *signOptions) run(cmd *cobra.Command, ro *rootOptions, args []string) error {
	if o.key == "" {
		return fmt.Errorf("%w: --key is required", ErrUsage)
	}
	format, err := sign.ParseFormat(o.format)
	if err != nil {
		return fmt.Errorf("%w: --format: %w", ErrUsage, err)
	}
	if o.referrers && format == sign.FormatBundle {
		return fmt.Errorf("%w: --referrers stores legacy signatures as referrers; --format bundle writes referrers already", ErrUsage)
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
	res, err := sign.Sign(ctx, d, signer, sign.Options{Registry: rc, Format: format, Recursive: o.recursive,
		Attestations: o.attestations, Referrers: o.referrers, Logger: ro.logger(cmd)})
	if err != nil {
		return err
	}
	signed := make([]string, len(res.Digests))
	for i, h := range res.Digests {
		signed[i] = h.String()
	}
	w := cmd.OutOrStdout()
	if ro.output == "json" {
		return writeJSON(w, map[string]any{"ref": ref.String(), "digest": d.DigestStr(), "signed": signed, "format": format, "referrers": o.referrers})
	}
	for _, s := range signed {
		fmt.Fprintf(w, "signed %s@%s\n", d.Context(), s)
	}
	return nil
}
