package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// benchCase is one scenario. Setup pushes what every tool starts from, once;
// each run then gets a fresh target and is checked after it was measured.
type benchCase interface {
	Name() string
	Title() string
	// Describe is a markdown paragraph for RESULTS.md.
	Describe() string
	Setup(ctx context.Context, e *env) error
	Op(target string) op
	Check(ctx context.Context, target string) ([]finding, error)
}

// finding is one property of a tool's result, such as "os.version kept 1/1".
type finding struct {
	Name  string
	Value string
	OK    bool
}

// Finding names: the columns of the "what the result kept" table.
const (
	findEntries    = "entries"
	findOSVersion  = "os.version"
	findOSFeatures = "os.features"
	findVariant    = "variant"
	findChildren   = "children"
	findDescAnnot  = "desc. annotations"
)

// mergeCase merges single-platform images, each tagged in one source
// repository, and optionally one index of further images, into one index in
// another repository.
type mergeCase struct {
	name, title, about string
	platforms          []platformSpec // pushed as single images
	indexed            []platformSpec // pushed as one index without os.version

	sources  []source            // every image, filled by Setup
	indexRef string              // the index source, when indexed is set
	auth     authn.Authenticator // the registry's, for Check; from Setup
}

// source is a pushed source image and what its config and manifest say.
type source struct {
	ref         string // "" for a child of the index source
	digest      string
	platform    platformSpec
	annotations map[string]string
	blobs       int // the config and the layers its manifest names
}

func (c *mergeCase) Name() string  { return c.name }
func (c *mergeCase) Title() string { return c.title }

func (c *mergeCase) Describe() string {
	list := func(ps []platformSpec) string {
		var ss []string
		for _, p := range ps {
			ss = append(ss, "`"+p.String()+"`")
		}
		return strings.Join(ss, ", ")
	}
	d := fmt.Sprintf("%s Every image has manifest annotations and two payload layers of seeded random bytes "+
		"(%d KiB and %d KiB) on top of the regtest fixture (Windows: the Windows layer layout, os.version "+
		"and os.features `win32k` in the config). Each tool merges them into a fresh repository of its own.",
		c.about, runtimeLayerSize>>10, appLayerSize>>10)
	if len(c.platforms) > 0 {
		d += fmt.Sprintf(" Single-platform images in `src/%s`, one tag each: %s.", c.name, list(c.platforms))
	}
	if len(c.indexed) > 0 {
		d += fmt.Sprintf(" One index `src/%s:index` whose descriptors carry os/arch/variant but no os.version "+
			"(as `docker buildx imagetools create` writes them), with: %s. regctl gets `--platform` for "+
			"each of these, without which it nests the index instead of merging its children.", c.name, list(c.indexed))
	}
	return d
}

// Setup builds and pushes the source images (and the index of indexed
// ones), and tells the byte counter which blobs are configs.
func (c *mergeCase) Setup(ctx context.Context, e *env) error {
	c.auth = e.auth
	all := append(slices.Clone(c.platforms), c.indexed...)
	c.sources = make([]source, len(all))
	imgs := make([]v1.Image, len(all))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, p := range all {
		g.Go(func() error {
			img, err := sourceImage(p, fmt.Sprintf("%s-%d", c.name, i))
			if err != nil {
				return fmt.Errorf("building %s: %w", p, err)
			}
			cfg, err := img.ConfigName()
			if err != nil {
				return err
			}
			e.bytes.markConfig(cfg.String())
			m, err := img.Manifest()
			if err != nil {
				return err
			}
			d, err := img.Digest()
			if err != nil {
				return err
			}
			imgs[i] = img
			c.sources[i] = source{digest: d.String(), platform: p, annotations: m.Annotations, blobs: 1 + len(m.Layers)}
			if i >= len(c.platforms) {
				return nil // pushed with the index below
			}
			ref, err := e.reg.Ref("src/" + c.name + ":" + p.tag())
			if err != nil {
				return err
			}
			c.sources[i].ref = ref.String()
			return e.push(gctx, ref, img)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if len(c.indexed) == 0 {
		return nil
	}
	// Like `docker buildx imagetools create` from single manifests: the
	// descriptors carry os/arch/variant but no os.version.
	var entries []regtest.Entry
	for _, img := range imgs[len(c.platforms):] {
		entries = append(entries, regtest.Entry{Image: img, OmitOSVersion: true})
	}
	idx, err := regtest.Index(entries...)
	if err != nil {
		return err
	}
	ref, err := e.reg.Ref("src/" + c.name + ":index")
	if err != nil {
		return err
	}
	if err := e.push(ctx, ref, idx); err != nil {
		return err
	}
	c.indexRef = ref.String()
	return nil
}

// Op lists the index source first, then the images. Platforms names what to
// take from the index, for tools that need it to take its children.
func (c *mergeCase) Op(target string) op {
	o := indexCreate{Target: target}
	if c.indexRef != "" {
		o.Sources = append(o.Sources, c.indexRef)
		for _, p := range c.indexed {
			o.Platforms = append(o.Platforms, platformSpec{OS: p.OS, Arch: p.Arch, Variant: p.Variant}.String())
		}
	}
	for _, s := range c.sources {
		if s.ref != "" {
			o.Sources = append(o.Sources, s.ref)
		}
	}
	return o
}

// Check reads the index at target and compares each child's descriptor with
// the config of the source it came from.
func (c *mergeCase) Check(ctx context.Context, target string) ([]finding, error) {
	_, im, err := readResultIndex(ctx, target, c.auth)
	if err != nil {
		return nil, err
	}
	descs := map[string]v1.Descriptor{}
	for _, d := range im.Manifests {
		descs[d.Digest.String()] = d
	}
	// A source whose digest is missing counts as lost: the tool rewrote it.
	var present, osv, osvAll, feat, featAll, variant, variantAll, annot int
	for _, s := range c.sources {
		osvAll += boolInt(s.platform.OSVersion != "")
		featAll += boolInt(len(s.platform.OSFeatures) > 0)
		variantAll += boolInt(s.platform.Variant != "")
		d, ok := descs[s.digest]
		if !ok {
			continue
		}
		present++
		p := d.Platform
		if p == nil {
			p = &v1.Platform{}
		}
		osv += boolInt(s.platform.OSVersion != "" && p.OSVersion == s.platform.OSVersion)
		feat += boolInt(len(s.platform.OSFeatures) > 0 && slices.Equal(p.OSFeatures, s.platform.OSFeatures))
		variant += boolInt(s.platform.Variant != "" && p.Variant == s.platform.Variant)
		annot += boolInt(hasAll(d.Annotations, s.annotations))
	}
	n := len(c.sources)
	return []finding{
		{findEntries, fmt.Sprintf("%d/%d", len(im.Manifests), n), len(im.Manifests) == n && present == n},
		{findChildren, ratio("unchanged", present, n), present == n},
		{findOSVersion, ratio("kept", osv, osvAll), osv == osvAll},
		{findOSFeatures, ratio("kept", feat, featAll), feat == featAll},
		{findVariant, ratio("kept", variant, variantAll), variant == variantAll},
		{findDescAnnot, fmt.Sprintf("%d/%d", annot, n), true},
	}, nil
}

func ratio(word string, n, of int) string {
	if n < of {
		return fmt.Sprintf("**lost %d/%d**", of-n, of)
	}
	return fmt.Sprintf("%s %d/%d", word, n, of)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// hasAll reports whether got carries every annotation of want (and want has some).
func hasAll(got, want map[string]string) bool {
	if len(want) == 0 {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// cases returns the benchmark cases in report order.
func cases() []benchCase {
	return []benchCase{
		&mergeCase{
			name:  "merge-3",
			title: "Merge 3 single-platform images into one index",
			about: "The everyday case: the three per-OS images of one CI build become one tag.",
			platforms: []platformSpec{
				linux("amd64", ""),
				linux("arm64", "v8"),
				win("amd64", regtest.OSVersionLTSC2025),
			},
		},
		&mergeCase{
			name:  "merge-40",
			title: "Merge 40 single-platform images into one index",
			about: "A wide index: 40 images with 40 distinct platforms, because imgctl refuses two entries " +
				"with the same os/arch/variant and Windows build. Linux: 20 architecture/variant pairs that " +
				"Go and containerd know (`arm64/v8.2` is a rarely used but valid variant). Windows: amd64 and " +
				"arm64 over the container builds 14393 to 26200, with made-up but plausible revisions.",
			platforms: fortyPlatforms(),
		},
		&mergeCase{
			name:  "merge-index",
			title: "Merge an index that lacks os.version with another Windows image",
			about: "Adding an ltsc2022 variant to an existing multi-OS index whose Windows descriptor has " +
				"no os.version. The config still has it; a merge should put it back on the descriptor.",
			platforms: []platformSpec{win("amd64", regtest.OSVersionLTSC2022)},
			indexed: []platformSpec{
				linux("amd64", ""),
				linux("arm64", "v8"),
				win("amd64", regtest.OSVersionLTSC2025),
			},
		},
		&rebaseCase{},
		&promoteCase{},
	}
}

// fortyPlatforms is 20 Linux and 20 Windows platforms, all distinct.
func fortyPlatforms() []platformSpec {
	ps := []platformSpec{
		linux("amd64", ""), linux("amd64", "v2"), linux("amd64", "v3"), linux("amd64", "v4"),
		linux("arm64", "v8"), linux("arm64", "v8.2"), linux("arm64", "v9"),
		linux("arm", "v5"), linux("arm", "v6"), linux("arm", "v7"),
		linux("386", ""), linux("ppc64le", ""), linux("ppc64", ""), linux("s390x", ""),
		linux("riscv64", ""), linux("mips64le", ""), linux("mips64", ""), linux("mipsle", ""),
		linux("mips", ""), linux("loong64", ""),
	}
	for _, v := range []string{
		"14393.7428", "16299.1087", "17134.1305", "17763.6414", "18362.1256", "18363.1556",
		"19041.1415", "19042.1889", "20348.4297", "25398.1849", "26100.6584", "26200.6899",
	} {
		ps = append(ps, win("amd64", "10.0."+v))
	}
	for _, v := range []string{
		"17763.7009", "18362.1316", "19041.1466", "20348.4171", "22000.2538", "25398.1791",
		"26100.6725", "26200.7019",
	} {
		ps = append(ps, win("arm64", "10.0."+v))
	}
	return ps
}

// readResultIndex reads the index a tool pushed to target, for a check,
// with auth (nil: anonymous).
func readResultIndex(ctx context.Context, target string, auth authn.Authenticator) (v1.ImageIndex, *v1.IndexManifest, error) {
	ref, err := name.ParseReference(target, name.Insecure)
	if err != nil {
		return nil, nil, err
	}
	idx, err := remote.Index(ref, authOptions(ctx, auth)...)
	if err != nil {
		return nil, nil, fmt.Errorf("reading result %s: %w", target, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, nil, err
	}
	return idx, im, nil
}
