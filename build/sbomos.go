package build

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/moby/buildkit/client"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/imgctl/imgctl/build/content"
	"github.com/imgctl/imgctl/build/graft"
	"github.com/imgctl/imgctl/index"
	"github.com/imgctl/imgctl/internal/rawmanifest"
	"github.com/imgctl/imgctl/internal/spdxos"
	"github.com/imgctl/imgctl/snapshot"
)

// windowsSBOM adds the Windows operating system and the base, as its
// ancestor, to the SPDX SBOM of variant i's Windows image (spdxos), on
// either path: the statement BuildKit attached is rewritten, with its
// attestation manifest, and ex then publishes the new manifest (Prepared)
// in place of the one BuildKit pushed, which stays in the tag's repository
// untagged. What it records comes from the resolved base (reference,
// digest, config os.version), never from the base's files. A build
// without an SBOM, a variant without a resolved Windows base, and an
// attestation without an SPDX statement are left as they are.
//
// A variant grafted (gr) with SBOM.BaseReference was scanned on the
// placeholder: the scanner listed the placeholder's files as empty files,
// and they are taken out of the SBOM, which then lists the stage's own
// files and records the base by reference.
func (r *run) windowsSBOM(ctx context.Context, i int, c *client.Client, src content.BlobSource, ex *content.Exported, gr *graft.Graft) error {
	if r.o.SBOM == nil {
		return nil
	}
	placeholder, err := r.placeholderOnly(ctx, c, gr, ex)
	if err != nil {
		return err
	}
	fb, b, ok := r.p.windowsBase(i)
	if !ok {
		return nil
	}
	rb := r.p.resolved[resolvedKey(i, fb)]
	repo := r.o.Tag.Context()
	children := ex.Prepared
	if children == nil {
		children = presentChildren(ex, repo)
	}
	var imgs []v1.Descriptor
	for _, c := range children {
		if p := c.Descriptor.Platform; p != nil && p.OS == "windows" && !snapshot.IsAttestation(c.Descriptor) {
			imgs = append(imgs, c.Descriptor)
		}
	}
	changed := false
	for j, c := range children {
		subj, ok := snapshot.Subject(c.Descriptor)
		if !snapshot.IsAttestation(c.Descriptor) || !ok {
			continue
		}
		for _, img := range imgs {
			if img.Digest != subj {
				continue
			}
			w := spdxos.Windows{OSVersion: rb.OSVersion, Architecture: img.Platform.Architecture, Base: b.Ref, BaseDigest: rb.Digest.String()}
			if w.OSVersion == "" {
				w.OSVersion = img.Platform.OSVersion
			}
			nc, ok, err := withWindowsOS(ctx, src, c, img, sbomEdit{w, placeholder}, repo)
			if err != nil {
				return fmt.Errorf("adding the Windows OS to the SBOM of %s: %w", r.p.Variants[i].Name, err)
			}
			if ok {
				children[j], changed = nc, true
			}
		}
	}
	if changed {
		ex.Prepared = children
	}
	return nil
}

// presentChildren are the images and attestations a plain solve pushed,
// as the merge publishes them (see run.publish).
func presentChildren(ex *content.Exported, repo name.Repository) []index.Prepared {
	from := repo.Digest(ex.Top.Digest.String())
	var out []index.Prepared
	for _, img := range ex.Images {
		out = append(out, index.Prepared{Descriptor: img.Descriptor, From: from, Present: true})
	}
	for _, d := range ex.Attestations {
		out = append(out, index.Prepared{Descriptor: d, From: from, Present: true})
	}
	return out
}

// sbomEdit is what withWindowsOS does to an SPDX statement: drop the
// placeholder's files, when set, and add the Windows OS and base.
type sbomEdit struct {
	windows     spdxos.Windows
	placeholder map[string]bool
}

func (e sbomEdit) apply(st []byte) ([]byte, error) {
	if e.placeholder != nil {
		var err error
		st, _, err = spdxos.DropFiles(st, func(name, _ string) bool {
			// Syft names files relative to the scanned root.
			return e.placeholder[strings.ToLower(path.Join("/", name))]
		})
		if err != nil {
			return nil, err
		}
	}
	return spdxos.AddWindows(st, e.windows)
}

// withWindowsOS is attestation child c of image img with each of its SPDX
// statements edited by e; false when it has none.
func withWindowsOS(ctx context.Context, src content.BlobSource, c index.Prepared, img v1.Descriptor, e sbomEdit, repo name.Repository) (index.Prepared, bool, error) {
	read := func(d v1.Descriptor, manifest bool) ([]byte, error) {
		for _, b := range c.Blobs {
			if b.Descriptor.Digest == d.Digest && b.Data != nil {
				return b.Data, nil
			}
		}
		return src.Read(ctx, d, manifest)
	}
	raw := c.Manifest
	if raw == nil {
		var err error
		if raw, err = src.Read(ctx, c.Descriptor, true); err != nil {
			return c, false, err
		}
	}
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return c, false, err
	}
	statements := make([][]byte, len(m.Layers))
	found := false
	for k, l := range m.Layers {
		st, err := read(l, false)
		if err != nil {
			return c, false, err
		}
		statements[k] = st
		if l.Annotations[snapshot.AnnotationPredicateType] != snapshot.PredicateSPDX {
			continue
		}
		if statements[k], err = e.apply(st); err != nil {
			if errors.Is(err, spdxos.ErrNotSPDX) {
				statements[k] = st
				continue
			}
			return c, false, err
		}
		found = true
	}
	if !found {
		return c, false, nil
	}
	var craw []byte
	if m.Config.MediaType != types.MediaType(ocispecs.MediaTypeEmptyJSON) {
		var err error
		if craw, err = read(m.Config, false); err != nil {
			return c, false, err
		}
	}
	at, err := rawmanifest.RewriteAttestation(raw, craw, statements, img)
	if err != nil {
		return c, false, err
	}
	var blobs []index.Blob
	for k, l := range at.Layers {
		blobs = append(blobs, index.Blob{Descriptor: l, Data: statements[k]})
	}
	if at.Config != nil {
		blobs = append(blobs, index.Blob{Descriptor: at.ConfigDescriptor, Data: at.Config})
	}
	h, size, err := v1.SHA256(bytes.NewReader(at.Manifest))
	if err != nil {
		return c, false, err
	}
	d := c.Descriptor
	d.Digest, d.Size = h, size
	d.Annotations = maps.Clone(c.Descriptor.Annotations)
	from := c.From
	if from == nil {
		from = repo.Digest(c.Descriptor.Digest.String())
	}
	return index.Prepared{Descriptor: d, Manifest: at.Manifest, Blobs: blobs, From: from}, true, nil
}

// placeholderOnly are the files of gr's placeholder that the stage's own
// layers do not hold, when the variant was grafted (ex.Prepared is set; a
// graft that failed was solved again on the plain path) with an SBOM that
// records the base by reference; else nil. The stage's layers are read
// from the daemon c (else the tag's repository); no base layer is read.
func (r *run) placeholderOnly(ctx context.Context, c *client.Client, gr *graft.Graft, ex *content.Exported) (map[string]bool, error) {
	if gr == nil || ex.Prepared == nil || !r.o.SBOM.BaseReference || len(ex.Images) != 1 {
		return nil, nil
	}
	files, err := gr.PlaceholderFiles()
	if err != nil {
		return nil, err
	}
	stage := map[string]bool{}
	for _, d := range gr.StageLayers(ex.Images[0]) {
		l, err := content.DaemonLayer(ctx, c.ContentClient(), d)
		if err == nil {
			err = graft.LayerFiles(l, stage)
		}
		if err != nil {
			if l, err = r.rc.Layer(ctx, r.o.Tag.Context().Digest(d.Digest.String())); err == nil {
				err = graft.LayerFiles(l, stage)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("reading the stage's layer %s: %w", d.Digest, err)
		}
	}
	for p := range stage {
		delete(files, p)
	}
	return files, nil
}
