package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// rebasePlatforms are the variants of the rebased index.
var rebasePlatforms = []platformSpec{
	linux("amd64", ""), linux("arm64", "v8"), {OS: "windows", Arch: "amd64", OSVersion: rebaseWinOld},
}

// rebaseIndex rebases the index Source onto its bases' current images as
// Target. Variants name each image and its old and new base by digest, for
// tools that rebase one image at a time.
type rebaseIndex struct {
	Target, Source string
	Variants       []rebaseVariant
}

// rebaseVariant is one image of the index with its old and new base.
type rebaseVariant struct {
	Platform                string // os/arch[/variant]
	Image, OldBase, NewBase string // full references by digest
}

func (rebaseIndex) opName() string { return "rebase" }

// rebaseCase is the monthly job: an index of variants built on bases that
// have since moved. The zero value is rebase-3, the variants of
// rebasePlatforms; name, title, about and platforms make another
// (rebase-1-windows in dist_cases.go).
type rebaseCase struct {
	name, title, about string
	platforms          []platformSpec
	inPlace            bool // each run rebases a copy of the source in its own repository

	attestations int  // attestation manifests in the source index, from Setup
	baseIndexed  bool // the base tags hold indexes, from Setup

	src      string
	variants []rebaseVariant
	want     map[string]rebaseWant // by os/arch
	auth     authn.Authenticator   // the registry's, for Check; from Setup
}

// plats returns the variants of the rebased index.
func (c *rebaseCase) plats() []platformSpec {
	if c.platforms == nil {
		return rebasePlatforms
	}
	return c.platforms
}

// rebaseWant is what a correct rebase of one variant looks like.
type rebaseWant struct {
	baseLayers, appLayers []v1.Descriptor
	newBase, osVersion    string
	variant               string
}

func (c *rebaseCase) Name() string {
	if c.name == "" {
		return "rebase-3"
	}
	return c.name
}

func (c *rebaseCase) Title() string {
	if c.title == "" {
		return "Rebase a 3-variant index onto moved bases"
	}
	return c.title
}

func (c *rebaseCase) Describe() string {
	if c.about != "" {
		return c.about
	}
	return fmt.Sprintf("The monthly job after Patch Tuesday. `src/rebase-3:1` is an index of linux/amd64, linux/arm64/v8 "+
		"and windows/amd64 `%s` (each with a BuildKit-style attestation), built on `base/distroless:latest` "+
		"(an index) and `base/nanoserver:ltsc2025` in the same registry; every manifest carries the "+
		"`org.opencontainers.image.base.name`/`.digest` annotations of its base's platform manifest. Each base "+
		"has a %d KiB payload layer and each app a %d KiB one. Then both base tags move: Windows to `%s` (same "+
		"build), Linux to new images. Commands: `imgctl rebase --no-verify SRC -t TARGET`; for crane, "+
		"`crane rebase IMAGE@digest --old_base BASE@old --new_base BASE@new -t TARGET-variant` once per variant "+
		"(crane does not rebase an index) then `crane index append -t TARGET -m ...`; for regctl, "+
		"`regctl image mod IMAGE@digest --rebase --create TARGET-variant` once per variant (it reads the annotations) "+
		"then `regctl index create TARGET --ref ...`: `regctl image mod SRC --rebase` on the index fails, since "+
		"regctl reads the annotations of the top manifest only (the index has none) and one `--rebase-ref old,new` "+
		"pair cannot name both a Windows and a Linux base. Peer request counts include these extra commands. After each run the result "+
		"is checked: new base layers first, app layers unchanged, os.version on the descriptor and in the config, "+
		"the variant (arm64/v8), the base.digest annotation, media types of one family, and what became of the attestations.",
		rebaseWinOld, runtimeLayerSize>>10, appLayerSize>>10, rebaseWinNew)
}

// key is os/arch[/variant], without os.version.
func key(p platformSpec) string {
	return platformSpec{OS: p.OS, Arch: p.Arch, Variant: p.Variant}.String()
}

func (*rebaseCase) baseRepo(p platformSpec) string {
	if p.OS == "windows" {
		return "base/nanoserver:ltsc2025"
	}
	return "base/distroless:latest"
}

// Setup pushes January's bases, the app index built on them, then
// February's bases under the same tags.
func (c *rebaseCase) Setup(ctx context.Context, e *env) error {
	c.auth = e.auth
	old, err := benchBases(c.plats(), rebaseWinOld, "jan")
	if err != nil {
		return err
	}
	if err := c.pushBases(ctx, e, old); err != nil {
		return err
	}
	apps, idx, err := attestedApps(e, c.plats(), old, func(p platformSpec) string { return e.reg.Host() + "/" + c.baseRepo(p) })
	if err != nil {
		return err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	c.attestations = len(im.Manifests) - len(c.plats())
	src, err := e.reg.Ref("src/" + c.Name() + ":1")
	if err != nil {
		return err
	}
	if err := e.push(ctx, src, idx); err != nil {
		return err
	}
	c.src = src.String()
	nb, err := benchBases(c.plats(), rebaseWinNew, "feb")
	if err != nil {
		return err
	}
	if err := c.pushBases(ctx, e, nb); err != nil {
		return err
	}
	return c.record(e, apps, old, nb)
}

// record fills the per-variant references and the expected results.
func (c *rebaseCase) record(e *env, apps, old, nb map[string]v1.Image) error {
	c.variants, c.want = nil, map[string]rebaseWant{}
	ref := func(repo string, img v1.Image) (string, error) {
		d, err := img.Digest()
		repo, _, _ = strings.Cut(repo, ":")
		return e.reg.Host() + "/" + repo + "@" + d.String(), err
	}
	for _, p := range c.plats() {
		app, ob, nbi := apps[key(p)], old[p.String()], nb[p.String()]
		v := rebaseVariant{Platform: key(p)}
		var errs [3]error
		v.Image, errs[0] = ref("src/"+c.Name(), app)
		v.OldBase, errs[1] = ref(c.baseRepo(p), ob)
		v.NewBase, errs[2] = ref(c.baseRepo(p), nbi)
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		c.variants = append(c.variants, v)
		am, err := app.Manifest()
		if err != nil {
			return err
		}
		nm, err := nbi.Manifest()
		if err != nil {
			return err
		}
		om, err := ob.Manifest()
		if err != nil {
			return err
		}
		_, nd, _ := strings.Cut(v.NewBase, "@")
		w := rebaseWant{baseLayers: nm.Layers, appLayers: am.Layers[len(om.Layers):], newBase: nd}
		if p.OS == "windows" {
			w.osVersion = rebaseWinNew
		}
		w.variant = p.Variant
		c.want[p.OS+"/"+p.Arch] = w
	}
	return nil
}

// Op rebases the source, or with inPlace its copy in the target's
// repository (seed), into target.
func (c *rebaseCase) Op(target string) op {
	if !c.inPlace {
		return rebaseIndex{Target: target, Source: c.src, Variants: c.variants}
	}
	repo := target[:strings.LastIndex(target, ":")]
	o := rebaseIndex{Target: target, Source: repo + ":" + seedTag}
	for _, v := range c.variants {
		_, d, _ := strings.Cut(v.Image, "@")
		v.Image = repo + "@" + d
		o.Variants = append(o.Variants, v)
	}
	return o
}

// seedTag tags the copy of the source in a run's repository.
const seedTag = "1"

// seed copies the source index, with its children and their blobs, into
// the repository of target, unless the case rebases its source where it
// is: the monthly job rebases within the app's own repository, where the
// app's blobs already are, and a fresh copy per run keeps one run's
// uploads from saving the next run's.
func (c *rebaseCase) seed(ctx context.Context, e *env, target string) error {
	if !c.inPlace {
		return nil
	}
	src, err := name.ParseReference(c.src, name.Insecure)
	if err != nil {
		return err
	}
	idx, err := remote.Index(src, e.remote(ctx)...)
	if err != nil {
		return fmt.Errorf("reading the source %s: %w", c.src, err)
	}
	dst, err := name.ParseReference(target[:strings.LastIndex(target, ":")]+":"+seedTag, name.Insecure)
	if err != nil {
		return err
	}
	return e.push(ctx, dst, idx)
}

// sameDescriptors compares descriptors as they are written in a manifest.
func sameDescriptors(a, b []v1.Descriptor) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
