package rebase

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/imgctl/imgctl/internal/rawmanifest"
	"github.com/imgctl/imgctl/snapshot"
)

// parts are what one variant's rebase reads: the image, its old base and
// its new base, each manifest with its config.
type parts struct {
	app, old, new          *image
	appCfg, oldCfg, newCfg *config
}

// rebased is one variant moved onto its new base.
type rebased struct {
	manifest []byte        // exact bytes of the new manifest
	desc     v1.Descriptor // its index descriptor
	config   []byte        // exact bytes of the new config
	parsed   *v1.Manifest
	cfg      *v1.ConfigFile
}

// rewrite builds the rebased manifest and config with
// rawmanifest.ReplaceBase rather than mutate.Rebase, which starts from
// empty.Image (a Docker manifest without annotations, so an OCI image
// would change family and lose them), drops os.features, re-serialises the
// config through v1.ConfigFile (losing fields it does not know) and
// rebuilds every layer descriptor. Here the app layers keep their exact
// descriptors, every blob keeps its digest, and diff_ids come from the
// configs: no layer is ever read. rewrite checks that the image starts
// with its old base (layers, diff_ids, history), then orchestrates.
func rewrite(v *variant, p parts) (*rebased, error) {
	n := len(p.old.manifest.Layers)
	if !layersStartWith(p.app.manifest.Layers, p.old.manifest.Layers) {
		return nil, fmt.Errorf("variant %s: %w: its layers do not start with the %d layer(s) of %s@%s",
			v.Platform, ErrBaseMismatch, n, p.old.repo, p.old.desc.Digest)
	}
	b, err := newBase(p, n)
	if err != nil {
		return nil, fmt.Errorf("variant %s: %w", v.Platform, err)
	}
	ann := maps.Clone(p.app.manifest.Annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	if ann[snapshot.AnnotationBaseName] == "" {
		ann[snapshot.AnnotationBaseName] = v.BaseName
	}
	ann[snapshot.AnnotationBaseDigest] = p.new.desc.Digest.String()
	ed, err := rawmanifest.ReplaceBase(p.app.raw, p.appCfg.raw, p.app.desc.MediaType,
		rawmanifest.Replaced{Layers: n, History: len(p.oldCfg.file.History)}, *b, ann)
	if err != nil {
		return nil, fmt.Errorf("variant %s: %w", v.Platform, err)
	}
	r := &rebased{manifest: ed.Manifest, config: ed.Config}
	if r.parsed, err = v1.ParseManifest(bytes.NewReader(ed.Manifest)); err != nil {
		return nil, err
	}
	if r.cfg, err = v1.ParseConfigFile(bytes.NewReader(ed.Config)); err != nil {
		return nil, err
	}
	d, size, err := v1.SHA256(bytes.NewReader(ed.Manifest))
	if err != nil {
		return nil, err
	}
	r.desc = v.desc
	r.desc.Digest, r.desc.Size = d, size
	r.desc.Annotations = maps.Clone(v.desc.Annotations)
	if _, ok := r.desc.Annotations[snapshot.AnnotationBaseName]; ok || r.desc.Annotations[snapshot.AnnotationBaseDigest] != "" {
		r.desc.Annotations[snapshot.AnnotationBaseDigest] = p.new.desc.Digest.String()
	}
	r.desc.Platform = r.cfg.Platform()
	if v.desc.Platform != nil {
		np := *v.desc.Platform
		np.OSVersion, np.OSFeatures = r.cfg.OSVersion, slices.Clone(r.cfg.OSFeatures)
		r.desc.Platform = &np
	}
	return r, nil
}

// newBase checks that the image's diff_ids and history start with the old
// base's and returns the new base as rawmanifest.ReplaceBase takes it: its
// layer descriptors as its manifest holds them, its diff_ids, its history
// (when the image has one) and its os.version and os.features.
func newBase(p parts, n int) (*rawmanifest.Base, error) {
	app, old, nb := p.appCfg.file, p.oldCfg.file, p.newCfg.file
	if len(old.RootFS.DiffIDs) != n || len(app.RootFS.DiffIDs) < n || !slices.Equal(app.RootFS.DiffIDs[:n], old.RootFS.DiffIDs) {
		return nil, fmt.Errorf("%w: the diff_ids do not start with the old base's", ErrBaseMismatch)
	}
	if len(nb.RootFS.DiffIDs) != len(p.new.manifest.Layers) {
		return nil, fmt.Errorf("%w: the new base has %d layers and %d diff_ids", ErrBaseMismatch, len(p.new.manifest.Layers), len(nb.RootFS.DiffIDs))
	}
	b := &rawmanifest.Base{DiffIDs: nb.RootFS.DiffIDs, OS: &rawmanifest.OSFields{Version: nb.OSVersion, Features: nb.OSFeatures}}
	l, err := rawmanifest.Field(p.new.raw, "layers")
	if err == nil {
		err = json.Unmarshal(l, &b.Layers)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the new base's layers: %w", err)
	}
	if len(app.History) == 0 {
		return b, nil
	}
	if len(app.History) < len(old.History) {
		return nil, fmt.Errorf("%w: %d history entries, the old base has %d", ErrBaseMismatch, len(app.History), len(old.History))
	}
	for i, h := range old.History {
		if a := app.History[i]; a.CreatedBy != h.CreatedBy || a.EmptyLayer != h.EmptyLayer || a.Comment != h.Comment {
			return nil, fmt.Errorf("%w: history entry %d is %q, the old base's is %q", ErrBaseMismatch, i, a.CreatedBy, h.CreatedBy)
		}
	}
	h, err := rawmanifest.Field(p.newCfg.raw, "history")
	if err == nil && h != nil {
		err = json.Unmarshal(h, &b.History)
	}
	if err != nil {
		return nil, fmt.Errorf("reading history: %w", err)
	}
	if b.History == nil {
		b.History = []json.RawMessage{}
	}
	return b, nil
}
