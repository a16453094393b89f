package main

import (
	"context"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	specs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// Windows revisions of the rebase case: January and February of one build.
const (
	rebaseWinOld = "10.0.26100.33438"
	rebaseWinNew = "10.0.26100.33674"
)

// benchBases builds a base per platform of ps for one month: the regtest base
// fixture (nanoserver-like for Windows, a small Linux image otherwise) plus
// an incompressible payload layer, so that a tool that reads base layers
// shows it in the byte counts.
func benchBases(ps []platformSpec, winVersion, month string) (map[string]v1.Image, error) {
	out := map[string]v1.Image{}
	for _, p := range ps {
		var img v1.Image
		var err error
		prefix := "usr/lib/"
		if p.OS == "windows" {
			prefix = "Files/Windows/System32/"
			img, err = regtest.WindowsBaseImage(winVersion, regtest.WithSeed(month))
		} else {
			img, err = regtest.LinuxImage(p.Arch, regtest.WithSeed("distroless-"+month))
		}
		if err != nil {
			return nil, err
		}
		if img, err = withPayload(img, prefix+"base.bin", month+"/"+p.String(), runtimeLayerSize); err != nil {
			return nil, err
		}
		out[p.String()] = img
	}
	return out, nil
}

// benchApp builds the app variant on base: a small app layer and a
// payload, and the base annotations imgctl build writes.
func benchApp(p platformSpec, base v1.Image, baseName string) (v1.Image, error) {
	bd, err := base.Digest()
	if err != nil {
		return nil, err
	}
	var img v1.Image
	prefix := "app/"
	if p.OS == "windows" {
		prefix = "Files/app/"
		img, err = regtest.WindowsImage("", regtest.WithBase(base), regtest.WithSeed("rebase"))
	} else {
		img, err = regtest.LinuxImage(p.Arch, regtest.WithBase(base), regtest.WithSeed("rebase"))
	}
	if err != nil {
		return nil, err
	}
	if img, err = withPayload(img, prefix+"payload.bin", "app/"+p.String(), appLayerSize); err != nil {
		return nil, err
	}
	return mutate.Annotations(img, map[string]string{
		specs.AnnotationBaseImageName: baseName, specs.AnnotationBaseImageDigest: bd.String(),
	}).(v1.Image), nil
}

func withPayload(img v1.Image, name, seed string, size int) (v1.Image, error) {
	l, err := payloadLayer(name, seed, size)
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{Layer: l, History: v1.History{
		Created: v1.Time{Time: regtest.FixtureTime}, CreatedBy: "COPY " + name + " # buildkit",
	}})
}

// attestedApps builds the app variant of each platform of ps on its base
// in bases (base annotations naming baseName(p)), each with a BuildKit-style
// attestation manifest, marks their configs, and returns the apps by
// os/arch and the index of apps then attestations.
func attestedApps(e *env, ps []platformSpec, bases map[string]v1.Image, baseName func(platformSpec) string) (map[string]v1.Image, v1.ImageIndex, error) {
	var imgs, atts []regtest.Entry
	apps := map[string]v1.Image{}
	for _, p := range ps {
		app, err := benchApp(p, bases[p.String()], baseName(p))
		if err != nil {
			return nil, nil, err
		}
		att, err := regtest.AttestationEntry(app)
		if err != nil {
			return nil, nil, err
		}
		for _, img := range []v1.Image{app, att.Image} {
			if err := markConfig(e, img); err != nil {
				return nil, nil, err
			}
		}
		apps[key(p)] = app
		imgs, atts = append(imgs, regtest.Entry{Image: app}), append(atts, att)
	}
	idx, err := regtest.Index(append(imgs, atts...)...)
	return apps, idx, err
}

// pushBases pushes the Windows base as base/nanoserver:ltsc2025 and the
// Linux bases as one index base/distroless:latest, and marks their configs.
func (c *rebaseCase) pushBases(ctx context.Context, e *env, bases map[string]v1.Image) error {
	groups := map[string][]regtest.Entry{}
	for _, p := range c.plats() {
		img := bases[p.String()]
		if err := markConfig(e, img); err != nil {
			return err
		}
		groups[c.baseRepo(p)] = append(groups[c.baseRepo(p)], regtest.Entry{Image: img})
	}
	c.baseIndexed = true // each base tag holds an index, as on MCR
	for repo, es := range groups {
		idx, err := regtest.Index(es...)
		if err != nil {
			return err
		}
		ref, err := e.reg.Ref(repo)
		if err != nil {
			return err
		}
		if err := e.push(ctx, ref, idx); err != nil {
			return fmt.Errorf("pushing %s: %w", repo, err)
		}
	}
	return nil
}

func markConfig(e *env, img v1.Image) error {
	cfg, err := img.ConfigName()
	if err != nil {
		return err
	}
	e.bytes.markConfig(cfg.String())
	return nil
}
