package index

import (
	"cmp"
	"fmt"
	"log/slog"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/imgctl/imgctl/registry"
)

// Prefer says how duplicate platforms are resolved.
type Prefer string

// Duplicate resolutions.
const (
	// PreferNone refuses duplicates with ErrDuplicatePlatform.
	PreferNone Prefer = ""
	// PreferNewest keeps the newest of each duplicate group; see the
	// package documentation for what newest means.
	PreferNewest Prefer = "newest"
)

// ParsePrefer reads a --prefer value: "" or "none", or "newest".
func ParsePrefer(s string) (Prefer, error) {
	switch s {
	case "", "none":
		return PreferNone, nil
	case string(PreferNewest):
		return PreferNewest, nil
	}
	return "", fmt.Errorf("unknown preference %q: want newest", s)
}

// Options control Create and Remove. The zero value refuses duplicates,
// keeps attestations, never overwrites a tag and logs nowhere.
type Options struct {
	// Registry is the run's registry client; nil means registry.New().
	Registry *registry.Client
	// Logger receives progress at debug level and notes at info level;
	// nil discards.
	Logger *slog.Logger
	// Annotations are set on the index (e.g. org.opencontainers.image.version).
	Annotations map[string]string
	// NoAttestations drops every attestation manifest.
	NoAttestations bool
	// Prefer resolves duplicate platforms.
	Prefer Prefer
	// AlsoTags are more tags for the same index (imgctl's repeatable -t),
	// in the target's repository. Every tag is read and checked under the
	// tag rule before anything is written; see registry.PublishTags for
	// what a refusal at a later tag leaves.
	AlsoTags []name.Tag
	// Force allows overwriting an existing tag.
	Force bool
	// TagChecked tells PublishPrepared that the caller has just checked the
	// tag under the same Force rule (imgctl build checks it before it
	// solves), so it does not HEAD the tag again. A registry has no
	// create-if-absent for tags, so a second HEAD would only narrow the
	// window in which another writer can take the tag, not close it.
	TagChecked bool
	// DryRun plans the index and checks the tag but writes nothing.
	DryRun bool
	// Jobs bounds concurrent child copies and, separately, concurrent blob
	// transfers; 0 means registry.DefaultJobs.
	Jobs int
}

// logger is Options.Logger, or one that discards.
func (o *Options) logger() *slog.Logger { return cmp.Or(o.Logger, slog.New(slog.DiscardHandler)) }

// jobs is Options.Jobs, or registry.DefaultJobs when it is not positive.
func (o *Options) jobs() int { return cmp.Or(max(o.Jobs, 0), registry.DefaultJobs) }
