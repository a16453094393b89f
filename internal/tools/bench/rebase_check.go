package main

import (
	"context"
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	specs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/imgctl/imgctl/snapshot"
)

// Finding names of the rebase case.
const (
	findBaseLayers = "base layers"
	findAppLayers  = "app layers"
	findDescOSV    = "desc. os.version"
	findConfigOSV  = "config os.version"
	findBaseDigest = "base.digest"
	findMediaTypes = "media types"
	findAtts       = "attestations"
)

// rebaseTally counts what a rebase result got right.
type rebaseTally struct {
	images, base, app, descOSV, cfgOSV, windows, annot, family, atts int
	variant, variants, provenance                                    int
}

// Check reads the result index and compares each variant with what a
// correct rebase gives.
func (c *rebaseCase) Check(ctx context.Context, target string) ([]finding, error) {
	idx, im, err := readResultIndex(ctx, target, c.auth)
	if err != nil {
		return nil, err
	}
	var t rebaseTally
	var atts []v1.Descriptor
	images := map[string]bool{}
	for _, d := range im.Manifests {
		p := d.Platform
		if p == nil || p.OS == "unknown" {
			atts = append(atts, d)
			continue
		}
		images[d.Digest.String()] = true
		w, ok := c.want[p.OS+"/"+p.Architecture]
		if !ok {
			continue
		}
		if err := t.add(idx, d, w); err != nil {
			return nil, err
		}
	}
	if err := t.addAttestations(idx, atts, images); err != nil {
		return nil, err
	}
	n := len(c.plats())
	attText := ratioWord("provenance", "no provenance", t.provenance, n)
	if t.atts > 0 {
		attText += fmt.Sprintf(", **kept %d (stale)**", t.atts)
	}
	return []finding{
		{findEntries, fmt.Sprintf("%d/%d", t.images, n), t.images == n},
		{findBaseLayers, ratio("replaced", t.base, n), t.base == n},
		{findAppLayers, ratio("kept", t.app, n), t.app == n},
		{findVariant, ratio("kept", t.variant, t.variants), t.variant == t.variants},
		{findDescOSV, ratioWord("updated", "stale", t.descOSV, t.windows), t.descOSV == t.windows},
		{findConfigOSV, ratioWord("updated", "stale", t.cfgOSV, t.windows), t.cfgOSV == t.windows},
		{findBaseDigest, ratioWord("updated", "stale", t.annot, n), t.annot == n},
		{findMediaTypes, ratioWord("OCI", "mixed", t.family, n), t.family == n},
		{findAtts, attText, t.atts == 0 && t.provenance == n},
	}, nil
}

// addAttestations counts the attestations of the result: fresh provenance
// (about an image of the index, with an SLSA provenance v1 statement, as
// imgctl rebase writes for each rebased variant) and stale ones (about an
// image that left the index, or the source's provenance carried over).
func (t *rebaseTally) addAttestations(idx v1.ImageIndex, atts []v1.Descriptor, images map[string]bool) error {
	for _, d := range atts {
		if !images[d.Annotations[snapshot.AnnotationReferenceDigest]] {
			t.atts++
			continue
		}
		_, m, err := imageManifest(idx, d.Digest)
		if err != nil {
			return err
		}
		fresh := false
		for _, l := range m.Layers {
			fresh = fresh || l.Annotations[snapshot.AnnotationPredicateType] == snapshot.PredicateSLSAProvenanceV1
		}
		if fresh {
			t.provenance++
		} else {
			t.atts++
		}
	}
	return nil
}

// add checks one variant of the result.
func (t *rebaseTally) add(idx v1.ImageIndex, d v1.Descriptor, w rebaseWant) error {
	img, m, err := imageManifest(idx, d.Digest)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	t.images++
	nb, na := len(w.baseLayers), len(w.appLayers)
	if len(m.Layers) == nb+na && digestsEqual(m.Layers[:nb], w.baseLayers) {
		t.base++
	}
	if len(m.Layers) >= na && sameDescriptors(m.Layers[len(m.Layers)-na:], w.appLayers) {
		t.app++
	}
	if w.variant != "" {
		t.variants++
		t.variant += boolInt(d.Platform.Variant == w.variant && cf.Variant == w.variant)
	}
	if w.osVersion != "" {
		t.windows++
		t.descOSV += boolInt(d.Platform.OSVersion == w.osVersion)
		t.cfgOSV += boolInt(cf.OSVersion == w.osVersion)
	}
	t.annot += boolInt(m.Annotations[specs.AnnotationBaseImageDigest] == w.newBase)
	oci := strings.HasPrefix(string(m.MediaType), "application/vnd.oci.") && strings.HasPrefix(string(m.Config.MediaType), "application/vnd.oci.")
	for _, l := range m.Layers {
		oci = oci && strings.HasPrefix(string(l.MediaType), "application/vnd.oci.")
	}
	t.family += boolInt(oci)
	return nil
}

// imageManifest opens the child h of idx and reads its manifest.
func imageManifest(idx v1.ImageIndex, h v1.Hash) (v1.Image, *v1.Manifest, error) {
	img, err := idx.Image(h)
	if err != nil {
		return nil, nil, err
	}
	m, err := img.Manifest()
	return img, m, err
}

func digestsEqual(a, b []v1.Descriptor) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Digest != b[i].Digest {
			return false
		}
	}
	return true
}

// ratioWord is "good n/of", or "**bad m/of**" for the m that are not.
func ratioWord(good, bad string, n, of int) string {
	if n < of {
		return fmt.Sprintf("**%s %d/%d**", bad, of-n, of)
	}
	return fmt.Sprintf("%s %d/%d", good, n, of)
}
