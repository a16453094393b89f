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

// rewrite builds the rebased manifest and config by hand rather than with
// mutate.Rebase, which starts from empty.Image (a Docker manifest without
// annotations, so an OCI image would change family and lose them), drops
// os.features, re-serialises the config through v1.ConfigFile (losing
// fields it does not know) and rebuilds every layer descriptor. Here the
// app layers keep their exact descriptors, every blob keeps its digest, and
// diff_ids come from the configs: no layer is ever read.
func rewrite(v *variant, p parts) (*rebased, error) {
	n := len(p.old.manifest.Layers)
	if !layersStartWith(p.app.manifest.Layers, p.old.manifest.Layers) {
		return nil, fmt.Errorf("variant %s: %w: its layers do not start with the %d layer(s) of %s@%s",
			v.Platform, ErrBaseMismatch, n, p.old.repo, p.old.desc.Digest)
	}
	cfgRaw, err := rewriteConfig(p, n)
	if err != nil {
		return nil, fmt.Errorf("variant %s: %w", v.Platform, err)
	}
	man, err := rewriteManifest(v, p, n, cfgRaw)
	if err != nil {
		return nil, fmt.Errorf("variant %s: %w", v.Platform, err)
	}
	r := &rebased{manifest: man, config: cfgRaw}
	if r.parsed, err = v1.ParseManifest(bytes.NewReader(man)); err != nil {
		return nil, err
	}
	if r.cfg, err = v1.ParseConfigFile(bytes.NewReader(cfgRaw)); err != nil {
		return nil, err
	}
	d, size, err := v1.SHA256(bytes.NewReader(man))
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

// rewriteConfig replaces the old base's diff_ids and history entries with
// the new base's and takes os.version and os.features from the new base.
func rewriteConfig(p parts, n int) ([]byte, error) {
	app, old, nb := p.appCfg.file, p.oldCfg.file, p.newCfg.file
	if len(old.RootFS.DiffIDs) != n || len(app.RootFS.DiffIDs) < n || !slices.Equal(app.RootFS.DiffIDs[:n], old.RootFS.DiffIDs) {
		return nil, fmt.Errorf("%w: the diff_ids do not start with the old base's", ErrBaseMismatch)
	}
	if len(nb.RootFS.DiffIDs) != len(p.new.manifest.Layers) {
		return nil, fmt.Errorf("%w: the new base has %d layers and %d diff_ids", ErrBaseMismatch, len(p.new.manifest.Layers), len(nb.RootFS.DiffIDs))
	}
	cfg, err := rawmanifest.WithDiffIDs(p.appCfg.raw, slices.Concat(nb.RootFS.DiffIDs, app.RootFS.DiffIDs[n:]))
	if err != nil {
		return nil, err
	}
	repl := map[string]json.RawMessage{"os.version": nil, "os.features": nil}
	if len(app.History) > 0 {
		if repl["history"], err = rewriteHistory(p); err != nil {
			return nil, err
		}
	}
	if nb.OSVersion != "" {
		repl["os.version"], _ = rawmanifest.Encode(nb.OSVersion)
	}
	if len(nb.OSFeatures) > 0 {
		repl["os.features"], _ = rawmanifest.Encode(nb.OSFeatures)
	}
	return rawmanifest.ReplaceKeys(cfg, repl, "os.version", "os.features")
}

// rewriteHistory replaces the image's first len(old history) entries, which
// must be the old base's, with the new base's entries, keeping raw bytes.
func rewriteHistory(p parts) (json.RawMessage, error) {
	app, old := p.appCfg.file.History, p.oldCfg.file.History
	if len(app) < len(old) {
		return nil, fmt.Errorf("%w: %d history entries, the old base has %d", ErrBaseMismatch, len(app), len(old))
	}
	for i, h := range old {
		if a := app[i]; a.CreatedBy != h.CreatedBy || a.EmptyLayer != h.EmptyLayer || a.Comment != h.Comment {
			return nil, fmt.Errorf("%w: history entry %d is %q, the old base's is %q", ErrBaseMismatch, i, a.CreatedBy, h.CreatedBy)
		}
	}
	var appRaw, newRaw []json.RawMessage
	for _, x := range []struct {
		cfg []byte
		dst *[]json.RawMessage
	}{{p.appCfg.raw, &appRaw}, {p.newCfg.raw, &newRaw}} {
		h, err := rawmanifest.Field(x.cfg, "history")
		if err == nil && h != nil {
			err = json.Unmarshal(h, x.dst)
		}
		if err != nil {
			return nil, fmt.Errorf("reading history: %w", err)
		}
	}
	return rawmanifest.Encode(slices.Concat(newRaw, appRaw[len(old):]))
}
