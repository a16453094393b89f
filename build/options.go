package build

import (
	"cmp"
	"io"
	"log/slog"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/session/secrets/secretsprovider"
	"github.com/moby/buildkit/session/sshforward/sshprovider"

	"github.com/imgctl/imgctl/build/nodes"
	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/lint"
	"github.com/imgctl/imgctl/registry"
)

// ErrInvalidOptions is returned (wrapped) for build options that do not
// fit together; it is variant.ErrInvalidOptions, which variant planning
// returns too.
var ErrInvalidOptions = variant.ErrInvalidOptions

// Options describe one build.
type Options struct {
	// Builder is the BuildKit daemon. With Nodes it is the fallback for
	// platforms that no node builds; a zero Builder then means none.
	Builder nodes.Builder
	// Nodes spread the build over several daemons (see nodes.AssignNodes): each
	// variant is solved on the node of its platforms, concurrently, and
	// the results are merged into one index. Empty means Builder alone.
	Nodes []nodes.Node
	// ContextDir is the build context directory.
	ContextDir string
	// Dockerfile is the Dockerfile path; empty means ContextDir/Dockerfile.
	Dockerfile string
	// Variants say which platforms and Windows releases to build.
	Variants variant.VariantOptions
	// Target is the stage to build; empty means the last one.
	Target string
	// BaseResolver, when set, lets Prepare's preflight read from a
	// registry the platforms of a Windows base whose reference names no
	// release (imgctl lint --resolve; see lint.Options.Resolve). Build
	// leaves it nil: it reads its bases anyway, after Prepare.
	BaseResolver lint.BaseResolver
	// Tag is where the merged index is pushed; each solve pushes by digest
	// into Tag's repository.
	Tag name.Tag
	// AlsoTags are more tags in Tag's repository for the same index
	// (repeatable -t); see index.Options.AlsoTags.
	AlsoTags []name.Tag
	// Force allows overwriting an existing tag.
	Force bool
	// Registry holds the registry settings for the tag check, the merge
	// and a base read the builder cannot answer; nil means the defaults.
	// The bases themselves are resolved through each daemon.
	Registry *registry.Client
	// Secrets are exposed to RUN --mount=type=secret.
	Secrets []secretsprovider.Source
	// SSH are the agents and keys exposed to RUN --mount=type=ssh.
	SSH []sshprovider.AgentConfig
	// CacheFrom and CacheTo are BuildKit cache imports and exports. With
	// several variants a registry ref gets a -VARIANT suffix per variant.
	CacheFrom, CacheTo []client.CacheOptionsEntry
	// NoCache disables BuildKit's cache for the solves.
	NoCache bool
	// SyntaxImage, when set, is the Dockerfile frontend image to use
	// (gateway.v0); otherwise the daemon's built-in frontend builds the
	// file and a # syntax= line is ignored.
	SyntaxImage string
	// Provenance, when set, attaches a SLSA provenance attestation to
	// every image (nil: none). The CLI's default is ProvenanceMin, as
	// buildx's.
	Provenance *Provenance
	// SBOM, when set, attaches an SPDX SBOM to every image (nil: none);
	// see NeedsBaseFiles.
	SBOM *SBOM
	// WindowsPlain builds Windows variants on BuildKit's plain path, which
	// downloads and unpacks each base, instead of grafting the stage's
	// layers onto the base (see package build/graft).
	WindowsPlain bool
	// SkeletonCache is the directory that caches the directory trees of
	// Windows base layers for grafts (see skeleton.Maker); empty caches
	// nothing. The CLI uses skeleton.CacheDir.
	SkeletonCache string
	// SkeletonRepository is the repository of the registry skeleton
	// cache (skeleton.RegistryCache): a build on any runner reads a base
	// layer's skeleton there instead of the layer, and files the ones it
	// makes. Empty means the tag's repository. One named here is read only
	// if this build may write it (the cache's trust rule).
	SkeletonRepository string
	// Labels are set on every image's config, as the Dockerfile
	// frontend's label:KEY attributes (buildx's --label, a bake target's
	// labels).
	Labels map[string]string
	// Annotations are set on the merged index.
	Annotations map[string]string
	// Status receives the solve status of every solve; Build closes it
	// when the last solve ends (or when Build returns early). nil discards.
	Status chan *client.SolveStatus
	// Logger receives log lines about steps (solve, merge); nil discards.
	Logger *slog.Logger
	// Stderr receives warnings about the Docker config; nil discards.
	Stderr io.Writer
	// Note receives notes for the user as they arise, such as a base read
	// from its registry directly rather than through the builder; nil
	// discards. It may be called from several goroutines at once.
	Note func(msg string)
}

func (o *Options) note(msg string) {
	if o.Note != nil {
		o.Note(msg)
	}
}

// logger is Options.Logger, or one that discards.
func (o *Options) logger() *slog.Logger { return cmp.Or(o.Logger, slog.New(slog.DiscardHandler)) }

// registry returns o.Registry, set to a default client first when nil.
// Build calls it before any solve starts; the solves, which run
// concurrently, then only read the field.
func (o *Options) registry() *registry.Client {
	if o.Registry == nil {
		o.Registry = registry.New()
	}
	return o.Registry
}
