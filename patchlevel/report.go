package patchlevel

import (
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/imgctl/imgctl/platform"
)

// Status of a variant's patch level.
const (
	// StatusCurrent: no newer revision of the build was published by the
	// report's date.
	StatusCurrent = "current"
	// StatusBehind: newer revisions were published.
	StatusBehind = "behind"
	// StatusUnknown: the patch level cannot be told; Reason says why.
	StatusUnknown = "unknown"
)

// ReleaseUnknown is the release of a build that neither the lifecycle
// table nor Microsoft's channel tags name.
const ReleaseUnknown = "unknown"

// Subject is one Windows variant to report on.
type Subject struct {
	// Platform is the variant's platform, with its os.version.
	Platform platform.Platform
	// Digest is the variant's manifest.
	Digest string
	// Base is the variant's base reference; nil when it names none.
	Base name.Reference
}

// Revision is one base revision of a build, as the report read it.
type Revision struct {
	// Version is 10.0.BUILD.REV.
	Version string `json:"version"`
	// Tag is the tag it was read through.
	Tag string `json:"tag"`
	// Created is its config's created.
	Created time.Time `json:"created"`
	// Cycle is the Patch Tuesday of the cycle holding Created.
	Cycle platform.Date `json:"cycle"`
}

// Lifecycle is a release's lifecycle phase on the report's date.
type Lifecycle struct {
	// Phase is mainstream, extended or ended.
	Phase string `json:"phase"`
	// Until is the last day of Phase (for ended, the day support ended).
	Until         platform.Date `json:"until"`
	MainstreamEnd platform.Date `json:"mainstream_end"`
	ExtendedEnd   platform.Date `json:"extended_end,omitzero"`
}

// Variant is the patch level of one Windows variant: the JSON shape of
// `imgctl bases -o json`'s "patch_level".
type Variant struct {
	// Platform and Digest name the variant.
	Platform string `json:"platform"`
	Digest   string `json:"digest"`
	// Base is the base reference whose repository was listed.
	Base string `json:"base,omitempty"`
	// Release is the lifecycle table's name (ltsc2016 to ltsc2025), else
	// Microsoft's tag name of a channel release (20H2, 23H2), else
	// unknown; Channel is ltsc for a build the table holds, and empty
	// otherwise.
	Release string `json:"release"`
	Channel string `json:"channel,omitempty"`
	// Build and Revision are the variant's os.version's.
	Build    uint32 `json:"build,omitempty"`
	Revision uint32 `json:"revision,omitempty"`
	// Published is the created of the variant's base revision.
	Published *time.Time `json:"published,omitempty"`
	// Newest is the newest revision of the build published by the
	// report's date (the variant's own when it is current).
	Newest *Revision `json:"newest,omitempty"`
	// RevisionsBehind counts the newer revisions of the build;
	// PatchTuesdaysBehind the distinct Patch Tuesday cycles among them,
	// the variant's own left out (see platform.PatchTuesdaysBehind).
	RevisionsBehind     *int `json:"revisions_behind"`
	PatchTuesdaysBehind *int `json:"patch_tuesdays_behind"`
	// FixAvailableDays are the whole days from the created of the first
	// newer revision to the report's date; nil when current.
	FixAvailableDays *int `json:"fix_available_days"`
	// Newer are the newer revisions, oldest first.
	Newer []Revision `json:"newer,omitempty"`
	// Lifecycle is the release's phase on the report's date; nil when
	// Microsoft's base image lifecycle table has no row for the build,
	// and LifecycleReason then says so.
	Lifecycle       *Lifecycle `json:"lifecycle,omitempty"`
	LifecycleReason string     `json:"lifecycle_reason,omitempty"`
	// Status is current, behind or unknown; Reason says why it is unknown.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// Report is the patch level of every Windows variant on one date.
type Report struct {
	// At is the report's date.
	At       platform.Date `json:"at"`
	Variants []Variant     `json:"variants"`
}

// lifecycleOn fills v's release and lifecycle on date at.
func (v *Variant) lifecycleOn(at platform.Date) {
	l, ok := platform.LifecycleOf(v.Build)
	if !ok {
		v.Release = ReleaseUnknown
		if name, ok := platform.ChannelName(v.Build); ok {
			v.Release = name
		}
		v.LifecycleReason = fmt.Sprintf("Microsoft's base image lifecycle table lists no base image of build %d", v.Build)
		return
	}
	v.Release, v.Channel = l.Release, l.Channel
	v.Lifecycle = &Lifecycle{Phase: l.Phase(at), Until: l.PhaseEnd(at), MainstreamEnd: l.MainstreamEnd, ExtendedEnd: l.ExtendedEnd}
}

// unknown marks v unknown with a reason.
func (v *Variant) unknown(reason string) {
	v.Status, v.Reason = StatusUnknown, reason
}
