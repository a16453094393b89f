package rebase

import (
	"cmp"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/imgctl/imgctl/registry"
)

// Options control Check and Rebase. The zero value reads bases from the
// annotations only, refuses build changes and pushes.
type Options struct {
	// Registry is the run's registry client (its plain-HTTP rule also
	// parses base.name annotations); nil means registry.New().
	Registry *registry.Client
	// Bases is the base image per OS ("windows", "linux") for variants
	// whose manifest and descriptor carry no base.name annotation.
	Bases map[string]name.Reference
	// AllowBuildChange lets a Windows variant move to a base of another
	// build (e.g. 20348 to 26100).
	AllowBuildChange bool
	// DryRun plans the rebase, checks the tag and writes nothing.
	DryRun bool
	// AlsoTags are more tags in the target's repository for the rebased
	// index (repeatable -t); see index.Options.AlsoTags.
	AlsoTags []name.Tag
	// Force allows overwriting an existing tag (the CLI never sets it).
	Force bool
	// Jobs bounds concurrent reads and blob transfers; 0 means registry.DefaultJobs.
	Jobs int
	// Version is imgctl's version, recorded in the provenance of each
	// rebased variant (runDetails.builder.version["imgctl"]); "" records
	// "unknown".
	Version string
	// BuilderID is runDetails.builder.id of the provenance written for
	// each rebased variant; "" means DefaultBuilderID. Set it to the
	// identity of the platform that runs the rebase (a CI system's URI), as
	// a policy's trusted builders name it.
	BuilderID string
	// SourceDateEpoch, when set, is the time the provenance of every
	// rebased variant records as its start and finish (the CLI takes it
	// from $SOURCE_DATE_EPOCH, as BuildKit does). Unset, each variant
	// records its new base image's creation time, so that the output is a
	// function of the inputs: the same rebase gives the same digests.
	SourceDateEpoch *time.Time
	// Shared, when set, is the run's cache of base lookups, shared by every
	// Check and Rebase given it (see Shared).
	Shared *Shared
	// Annotations are set on the rebased index, over the source index's.
	Annotations map[string]string
	// Stage, when set, is the tag the rebased index is published at
	// instead of the target, in the target's repository; the provenance
	// still names the target, so that the index is the one a later
	// promote of Stage to the target carries (imgctl patch). Its digest
	// is the same whatever Stage is.
	Stage *name.Tag
	// Logger receives progress at debug level and notes at info level;
	// nil discards.
	Logger *slog.Logger
}

// logger is Options.Logger, or one that discards.
func (o *Options) logger() *slog.Logger { return cmp.Or(o.Logger, slog.New(slog.DiscardHandler)) }

// jobs is Options.Jobs, or registry.DefaultJobs when it is not positive.
func (o *Options) jobs() int { return cmp.Or(max(o.Jobs, 0), registry.DefaultJobs) }

// check refuses options that would write a bad provenance.
func (o *Options) check(target name.Tag) error {
	if o.Stage != nil && o.Stage.Context().Name() != target.Context().Name() {
		return fmt.Errorf("%w: stage %s is not in %s", ErrStage, o.Stage, target.Context())
	}
	if o.BuilderID == "" {
		return nil
	}
	if u, err := url.Parse(o.BuilderID); err != nil || !u.IsAbs() || (u.Host == "" && u.Opaque == "") {
		return fmt.Errorf("%w: %q", ErrBuilderID, o.BuilderID)
	}
	return nil
}

func (o *Options) builderID() string {
	if o.BuilderID == "" {
		return DefaultBuilderID
	}
	return o.BuilderID
}

func (o *Options) version() string {
	if o.Version == "" {
		return "unknown"
	}
	return o.Version
}
