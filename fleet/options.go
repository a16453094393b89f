package fleet

import (
	"cmp"
	"log/slog"

	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/policy"
	"github.com/imgctl/imgctl/rebase"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/sign"
)

// AnnotationSource is the annotation on every index imgctl patch
// promotes: the digest of the release index it was rebased from. A rerun
// finds an earlier promotion of the same source by it, from the registry
// alone.
const AnnotationSource = "org.imgctl.patch.source"

// StagePrefix starts every staging tag (see StageTag).
const StagePrefix = "imgctl-stage-"

// DefaultJobs is how many images are worked on at once by default: as many
// as the registry client's blob transfers, since each image's rebase
// mounts or copies blobs.
const DefaultJobs = registry.DefaultJobs

// Options control Run.
type Options struct {
	// Registry is the run's one client; nil means registry.New().
	Registry *registry.Client
	// Rebase is the template of every image's rebase options: Bases,
	// AllowBuildChange, Version, BuilderID, SourceDateEpoch. Run sets
	// Registry, Shared, Stage, Annotations and DryRun itself.
	Rebase rebase.Options
	// Gate verifies every rebased index before it is signed and again,
	// signatures included, when it is promoted; nil means verify's rules
	// alone. Add the signer's public key to its keys so that promote
	// checks the signature it made. Run copies it per image.
	Gate *policy.Gate
	// Signer signs every rebased index (and with the gate's Signed scope
	// "all" its images) in Format; nil signs nothing.
	Signer signature.SignerVerifier
	Format sign.Format
	// Tags names the new release tags; nil means NewTagRule("", "").
	Tags *TagRule
	// Jobs bounds the images worked on at once; 0 means DefaultJobs.
	Jobs int
	// DryRun decides and plans every image and writes nothing.
	DryRun bool
	// At is the date each image's patch level, and the gate's patchLevel
	// limits, are reported on; the zero Date means today (UTC) for the
	// report and the gate's own At for its limits.
	At platform.Date
	// Logger receives progress at debug level; nil discards.
	Logger *slog.Logger
	// Progress, when set, is called after each image with how many are
	// done of how many.
	Progress func(done, total int)
}

func (o *Options) logger() *slog.Logger { return cmp.Or(o.Logger, slog.New(slog.DiscardHandler)) }

func (o *Options) jobs() int { return cmp.Or(max(o.Jobs, 0), DefaultJobs) }
