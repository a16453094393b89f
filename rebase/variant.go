package rebase

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
)

// Where a variant's base name came from (Variant.BaseSource).
const (
	SourceManifest   = "manifest-annotation"
	SourceDescriptor = "descriptor-annotation"
	SourceFlag       = "flag"
)

// Variant is what Check and Rebase report for one child of the index. It is
// the JSON shape of `imgctl bases -o json` and of the rebase plan.
type Variant struct {
	// Platform is the variant's platform, os/arch[/variant][:os.version].
	Platform string `json:"platform"`
	// Digest is the variant's manifest in the source index.
	Digest string `json:"digest"`
	// BaseName is the base reference and BaseSource where it came from:
	// manifest-annotation, descriptor-annotation or flag.
	BaseName   string `json:"base_name"`
	BaseSource string `json:"base_source"`
	// OldBase is the recorded base.digest ("" when none is recorded): an
	// index for MCR bases and for what BuildKit records, else an image.
	// NewBase is the base's current image for the variant's platform.
	// They are not at the same level; compare OldBaseImage and
	// NewBaseImage instead.
	OldBase string `json:"old_base"`
	NewBase string `json:"new_base"`
	// OldBaseIndex and OldBaseImage are the recorded base as an index (""
	// when an image was recorded) and its image for the variant's
	// platform; NewBaseIndex and NewBaseImage are the same of what the
	// base reference points at now. The variant is current when the two
	// images are equal. Both old ones are "" when no digest is recorded.
	OldBaseIndex string `json:"old_base_index,omitempty"`
	OldBaseImage string `json:"old_base_image,omitempty"`
	NewBaseIndex string `json:"new_base_index,omitempty"`
	NewBaseImage string `json:"new_base_image"`
	// OldOSVersion is the variant's os.version; NewOSVersion the current
	// base's, which a rebase gives the variant.
	OldOSVersion string `json:"old_os_version,omitempty"`
	NewOSVersion string `json:"new_os_version,omitempty"`
	// Stale is set when the variant is not on its base's current image.
	Stale bool `json:"stale"`
	// BuildChange is set when the base has no image of the variant's
	// Windows build any more, so a rebase would change the build.
	BuildChange bool `json:"build_change,omitempty"`
	// NewDigest is the rebased manifest (Rebase only).
	NewDigest string `json:"new_digest,omitempty"`
	// Provenance is the attestation manifest in the new index that holds
	// the rebase's provenance of NewDigest (Rebase only).
	Provenance string `json:"provenance,omitempty"`
	// Note explains an unusual status.
	Note string `json:"note,omitempty"`
}

// variant is a Variant with what was read to produce it.
type variant struct {
	Variant
	desc v1.Descriptor // the descriptor in the source index
	plat platform.Platform
	app  *image
	base name.Reference // the base reference
	old  *v1.Hash       // the recorded base.digest
	// oldChild is the old base's image for the platform (old, or its
	// child when old is an index), set by Rebase.
	oldChild v1.Hash
	// newDesc is its descriptor in the new index, set by Rebase.
	newDesc v1.Descriptor
	current *resolved
	// newBaseCreated is the creation time in the new base image's config,
	// set by Rebase for a stale variant.
	newBaseCreated time.Time
	note           string    // a note for Result.Notes, set by Rebase
	snap           snapEntry // what the new index holds for it, set by Rebase
}

// load reads one variant's manifest, finds its base and resolves the base's
// current image for the variant's platform.
func (s *session) load(ctx context.Context, repo name.Repository, desc v1.Descriptor) (*variant, error) {
	app, err := s.image(ctx, repo, desc.Digest)
	if err != nil {
		return nil, err
	}
	v := &variant{desc: desc, app: app}
	v.Digest = desc.Digest.String()
	if desc.Platform != nil {
		v.plat = *desc.Platform
	} else {
		cfg, err := s.config(ctx, app)
		if err != nil {
			return nil, err
		}
		if p := cfg.file.Platform(); p != nil {
			v.plat = *p
		}
	}
	v.Platform, v.OldOSVersion = platform.Format(v.plat), v.plat.OSVersion
	if err := s.baseOf(v); err != nil {
		return nil, err
	}
	if v.current, err = s.resolve(ctx, v.base, v.plat); err != nil {
		return nil, fmt.Errorf("variant %s: %w", v.Platform, err)
	}
	v.NewBase = v.current.desc.Digest.String()
	v.NewBaseImage = v.NewBase
	if v.current.top != v.current.desc.Digest {
		v.NewBaseIndex = v.current.top.String()
	}
	v.BuildChange = v.current.buildChange
	if p := v.current.desc.Platform; p != nil {
		v.NewOSVersion = p.OSVersion
	}
	return v, s.staleness(ctx, v)
}

// baseOf reads the base name and digest: each from the manifest
// annotations, else the descriptor annotations; the name else from
// Options.Bases for the variant's OS.
func (s *session) baseOf(v *variant) error {
	ma, da := v.app.manifest.Annotations, v.desc.Annotations
	nameStr := cmp.Or(ma[snapshot.AnnotationBaseName], da[snapshot.AnnotationBaseName])
	switch {
	case ma[snapshot.AnnotationBaseName] != "":
		v.BaseSource = SourceManifest
	case da[snapshot.AnnotationBaseName] != "":
		v.BaseSource = SourceDescriptor
	case s.o.Bases[v.plat.OS] != nil:
		v.BaseSource = SourceFlag
	default:
		return fmt.Errorf("variant %s: %w (no %s annotation and no base given for %s)", v.Platform, ErrNoBase, snapshot.AnnotationBaseName, v.plat.OS)
	}
	ref := s.o.Bases[v.plat.OS]
	if v.BaseSource != SourceFlag {
		var err error
		if ref, err = name.ParseReference(nameStr, s.rc.NameOptions()...); err != nil {
			return fmt.Errorf("variant %s: base %q: %w", v.Platform, nameStr, err)
		}
	}
	v.base, v.BaseName = ref, ref.String()
	if d := cmp.Or(ma[snapshot.AnnotationBaseDigest], da[snapshot.AnnotationBaseDigest]); d != "" {
		h, err := v1.NewHash(d)
		if err != nil {
			return fmt.Errorf("variant %s: %s %q: %w", v.Platform, snapshot.AnnotationBaseDigest, d, err)
		}
		v.old, v.OldBase = &h, h.String()
	}
	return nil
}

// staleness decides whether the variant is on its base's current image.
// A recorded digest equal to the current image or to what the base
// reference points at is current; a recorded index is resolved to its
// child first. Without a recorded digest, the variant is current when its
// layers start with the current base's.
func (s *session) staleness(ctx context.Context, v *variant) error {
	cur := v.current
	switch {
	case v.BuildChange:
		v.Stale, v.Note = true, fmt.Sprintf("the base has no image of this build any more; its newest is %s", v.NewOSVersion)
	case v.old != nil && *v.old == cur.desc.Digest:
		v.OldBaseImage = v.OldBase
	case v.old != nil && *v.old == cur.top:
		v.OldBaseIndex, v.OldBaseImage = v.OldBase, v.NewBaseImage
	case v.old != nil:
		child, err := s.oldChild(ctx, cur.repo, *v.old, v.plat)
		if err != nil {
			return fmt.Errorf("variant %s: %w", v.Platform, err)
		}
		v.OldBaseImage = child.String()
		if child != *v.old {
			v.OldBaseIndex = v.OldBase
		}
		v.Stale = child != cur.desc.Digest
	default:
		base, err := s.image(ctx, cur.repo, cur.desc.Digest)
		if err != nil {
			return err
		}
		v.Stale = !layersStartWith(v.app.manifest.Layers, base.manifest.Layers)
		if v.Stale {
			v.Note = "no " + snapshot.AnnotationBaseDigest + " recorded, and the layers do not start with the current base's"
		}
	}
	return nil
}

// layersStartWith reports whether the digests of layers start with those
// of base.
func layersStartWith(layers, base []v1.Descriptor) bool {
	if len(base) > len(layers) {
		return false
	}
	for i, b := range base {
		if layers[i].Digest != b.Digest {
			return false
		}
	}
	return true
}
