package sign

import (
	"errors"
	"fmt"

	"github.com/imgctl/imgctl/registry"
)

// Format is where and how Sign stores a signature.
type Format string

// Signature formats.
const (
	// FormatLegacy is cosign v2's format: a simple-signing payload and its
	// signature appended to the sha256-<hex>.sig tag. Every cosign release
	// and the policy engines built on cosign v2 read it.
	FormatLegacy Format = "legacy"
	// FormatBundle is cosign v3's default: a Sigstore bundle v0.3 (a DSSE
	// envelope around an in-toto statement) stored as an OCI 1.1 referrer,
	// or under the referrers tag fallback.
	FormatBundle Format = "bundle"
	// FormatBoth writes both, so that verifiers that read only one of the
	// stores find a signature.
	FormatBoth Format = "both"
)

// DefaultFormat is the format imgctl sign writes without --format:
// legacy, the one format every cosign CLI users run verifies offline with
// the key alone, as measured with the real CLIs
// (TestCosignCLIsVerifyDefaultSignatures, TestCosignCLIFormatMatrix):
//
//	format  cosign v2.6.5  cosign v3.1.3   (verify --key K --insecure-ignore-tlog=true, offline)
//	legacy  verifies       verifies (falls back to the .sig tag when there is no bundle)
//	bundle  refuses        verifies
//	both    refuses        verifies
//
// cosign v2.6.x takes the bundle path as soon as it finds a bundle, and
// that path needs a trusted root, which an offline site does not have
// ("trusted root is required when using new bundle format"). What legacy
// gives up: verifiers that read only bundles (sigstore-go's verifier,
// cosign v3 with --new-bundle-format and no .sig fallback) find nothing,
// and the .sig tag must be mutable in the registry. The zero Format of
// Options is FormatLegacy too.
const DefaultFormat = FormatLegacy

// Formats lists the formats, for flags and messages.
var Formats = []Format{FormatLegacy, FormatBundle, FormatBoth}

// ErrUnknownFormat is returned by ParseFormat for a name it does not know.
var ErrUnknownFormat = errors.New("unknown signature format")

// ParseFormat reads a format name: legacy, bundle or both.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w %q: want legacy, bundle or both", ErrUnknownFormat, s)
}

func (f Format) legacy() bool { return f == "" || f == FormatLegacy || f == FormatBoth }
func (f Format) bundle() bool { return f == FormatBundle || f == FormatBoth }

// immutableHint adds, to a registry's refusal to change a tag it holds
// immutable (registry.ImmutableTagError, errors.Is registry.ErrTagExists),
// why a signature write needs that tag mutable: cosign's .sig tag and the
// referrers tag fallback are rewritten with every signature added.
func immutableHint(err error) error {
	var ite *registry.ImmutableTagError
	if !errors.As(err, &ite) {
		return err
	}
	return fmt.Errorf("%w; signatures are added to this tag by rewriting it, so the registry's tag immutability must exempt the sha256-* tags (or sign in the Sigstore bundle format, on a registry with the OCI referrers API)", err)
}
