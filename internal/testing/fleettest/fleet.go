// Package fleettest publishes the fleet fixture of imgctl patch: January's
// and February's bases (two Windows LTSC releases and a Linux base) and
// app indexes built on them, some current, some stale in ltsc2022 only,
// some stale in every base. The patch e2e tests (cmd/imgctl/cli) and the
// bench's fleet cases (internal/tools/bench) both use it.
package fleettest

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/fleet"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"
)

// Windows revisions of the fleet's bases: January's and February's
// cumulative updates of each LTSC release.
const (
	W22Jan = "10.0.20348.4052"
	W22Feb = "10.0.20348.4171"
	W25Jan = "10.0.26100.33438"
	W25Feb = "10.0.26100.33674"
)

// BaseTags are the repository paths of the base tags every image of the
// fleet names: each must be resolved once per patch run.
var BaseTags = []string{"base/nanoserver/manifests/ltsc2022", "base/nanoserver/manifests/ltsc2025", "base/distroless/manifests/latest"}

// Kinds of images in the fleet.
const (
	KindCurrent = "current" // on February's bases
	KindStale22 = "stale22" // stale in ltsc2022 only
	KindBoth    = "both"    // stale in every base
)

// Registry is a registry the fixture pushes to: regtest's in-process one
// or disttest's CNCF distribution registry.
type Registry interface {
	Host() string
	PushTag(s string, x any, opts ...remote.Option) (name.Reference, v1.Hash, error)
}

// Case is one image of the fleet and what patch must do with it.
type Case struct {
	Repo, Tag string
	Kind      string // KindCurrent, KindStale22 or KindBoth
	LinuxRepo string
	Want      fleet.Outcome
	Failure   string
	NewTag    string
}

// Options shape the fleet.
type Options struct {
	// Images is the number of regular images, in fixed proportions by i
	// mod 20: 5 current, 7 stale in ltsc2022 only, 8 stale in both.
	Images int
	// Failing adds team0/policy (its Linux base is outside the policy's
	// allowed bases) and locked/app (for a repository that refuses writes).
	Failing bool
}

// bases are one month's base images.
type bases struct {
	w22, w25 v1.Image
	lin      [2]v1.Image
}

func newBases(month string) (bases, error) {
	v22, v25 := W22Jan, W25Jan
	if month == "feb" {
		v22, v25 = W22Feb, W25Feb
	}
	var b bases
	var err error
	if b.w22, err = regtest.WindowsBaseImage(v22); err != nil {
		return b, err
	}
	if b.w25, err = regtest.WindowsBaseImage(v25); err != nil {
		return b, err
	}
	for i, arch := range []string{"amd64", "arm64"} {
		if b.lin[i], err = regtest.LinuxImage(arch, regtest.WithSeed(month)); err != nil {
			return b, err
		}
	}
	return b, nil
}

// pushBases tags the month's bases: base/nanoserver:ltsc2022 and
// :ltsc2025, and the Linux base at linuxRepo:latest.
func pushBases(reg Registry, b bases, linuxRepo string) error {
	for _, p := range []struct {
		tag string
		es  []regtest.Entry
	}{
		{"base/nanoserver:ltsc2022", []regtest.Entry{{Image: b.w22}}},
		{"base/nanoserver:ltsc2025", []regtest.Entry{{Image: b.w25}}},
		{linuxRepo + ":latest", []regtest.Entry{{Image: b.lin[0]}, {Image: b.lin[1]}}},
	} {
		if err := pushIndex(reg, p.tag, p.es...); err != nil {
			return err
		}
	}
	return nil
}

func pushIndex(reg Registry, tag string, es ...regtest.Entry) error {
	idx, err := regtest.Index(es...)
	if err != nil {
		return err
	}
	if _, _, err := reg.PushTag(tag, idx); err != nil {
		return fmt.Errorf("pushing %s: %w", tag, err)
	}
	return nil
}

// app pushes an app index with linux/amd64, linux/arm64, ltsc2022 and
// ltsc2025 variants, each on the given bases and annotated with them as
// imgctl build does.
func app(reg Registry, tag, seed, linuxRepo string, w22, w25 v1.Image, lin [2]v1.Image) error {
	host := reg.Host()
	ann := func(base string, img v1.Image) (regtest.ImageOption, error) {
		d, err := img.Digest()
		return regtest.WithAnnotations(map[string]string{
			snapshot.AnnotationBaseName: host + "/" + base, snapshot.AnnotationBaseDigest: d.String(),
		}), err
	}
	var es []regtest.Entry
	for i, arch := range []string{"amd64", "arm64"} {
		a, err := ann(linuxRepo+":latest", lin[i])
		if err != nil {
			return err
		}
		img, err := regtest.LinuxImage(arch, regtest.WithBase(lin[i]), regtest.WithSeed(seed), a)
		if err != nil {
			return err
		}
		es = append(es, regtest.Entry{Image: img})
	}
	for _, w := range []struct {
		base string
		img  v1.Image
	}{{"base/nanoserver:ltsc2022", w22}, {"base/nanoserver:ltsc2025", w25}} {
		a, err := ann(w.base, w.img)
		if err != nil {
			return err
		}
		img, err := regtest.WindowsImage("", regtest.WithBase(w.img), regtest.WithSeed(seed), a)
		if err != nil {
			return err
		}
		es = append(es, regtest.Entry{Image: img})
	}
	return pushIndex(reg, tag, es...)
}

// Publish publishes January's bases, the images built on them, then
// February's bases and the images built on those, and returns the cases.
// Image 6's next patch tag 2.3.5 is taken by another release, so patch
// must choose 2.3.6.
func Publish(reg Registry, o Options) ([]Case, error) {
	var cases []Case
	for i := range o.Images {
		c := Case{Repo: fmt.Sprintf("team%d/app%d", i%3, i), Tag: "1.0.0", LinuxRepo: "base/distroless", Want: fleet.Promoted, NewTag: "1.0.1"}
		switch k := i % 20; {
		case k < 5:
			c.Kind, c.Want, c.NewTag = KindCurrent, fleet.Current, ""
		case k < 12:
			c.Kind, c.Tag, c.NewTag = KindStale22, "2.3.4", "2.3.5"
		default:
			c.Kind = KindBoth
		}
		if i == 6 { // 2.3.5 is taken by another release: the next free patch
			c.NewTag = "2.3.6"
		}
		if i%20 >= 16 {
			c.Tag, c.NewTag = "latest", "latest-r1"
		}
		cases = append(cases, c)
	}
	if o.Failing {
		cases = append(cases,
			Case{Repo: "team0/policy", Tag: "1.0.0", Kind: KindBoth, LinuxRepo: "other/distroless", Want: fleet.Failed, Failure: fleet.FailureCheck},
			// NewTag is where it goes when the repository accepts writes.
			Case{Repo: "locked/app", Tag: "1.0.0", Kind: KindBoth, LinuxRepo: "base/distroless", Want: fleet.Failed, Failure: fleet.FailureError, NewTag: "1.0.1"},
		)
	}
	jan, err := newBases("jan")
	if err != nil {
		return nil, err
	}
	feb, err := newBases("feb")
	if err != nil {
		return nil, err
	}
	linuxRepos := []string{"base/distroless"}
	if o.Failing {
		linuxRepos = append(linuxRepos, "other/distroless")
	}
	for _, r := range linuxRepos {
		if err := pushBases(reg, jan, r); err != nil {
			return nil, err
		}
	}
	build := func(c Case) error {
		tag := c.Repo + ":" + c.Tag
		switch c.Kind {
		case KindCurrent:
			return app(reg, tag, c.Repo, c.LinuxRepo, feb.w22, feb.w25, feb.lin)
		case KindStale22:
			return app(reg, tag, c.Repo, c.LinuxRepo, jan.w22, feb.w25, feb.lin)
		default:
			return app(reg, tag, c.Repo, c.LinuxRepo, jan.w22, jan.w25, jan.lin)
		}
	}
	for _, c := range cases {
		if c.Kind == KindBoth {
			if err := build(c); err != nil {
				return nil, err
			}
		}
	}
	// The February bases are published before the images that use them
	// (their base layers must be in the base repositories).
	for _, r := range linuxRepos {
		if err := pushBases(reg, feb, r); err != nil {
			return nil, err
		}
	}
	for _, c := range cases {
		if c.Kind != KindBoth {
			if err := build(c); err != nil {
				return nil, err
			}
		}
	}
	if len(cases) > 6 {
		other, err := regtest.LinuxImage("amd64", regtest.WithSeed("other"))
		if err != nil {
			return nil, err
		}
		if err := pushIndex(reg, cases[6].Repo+":2.3.5", regtest.Entry{Image: other}); err != nil {
			return nil, err
		}
	}
	return cases, nil
}

// List is patch's input file for cases on host: one reference a line,
// with the image's kind as a comment.
func List(host string, cases []Case) string {
	var b strings.Builder
	b.WriteString("# the fleet\n\n")
	for _, c := range cases {
		fmt.Fprintf(&b, "%s/%s:%s  # %s\n", host, c.Repo, c.Tag, c.Kind)
	}
	return b.String()
}

// Policy is a policy file that allows bases under host/base/ only and
// requires the fleet's four platforms.
func Policy(host string) string {
	return fmt.Sprintf("version: 1\ntargets: [ltsc2022, ltsc2025]\nrequirePlatforms: [linux/amd64, linux/arm64, windows/amd64:10.0.20348, windows/amd64:10.0.26100]\nallowedBases: [%s/base/*]\n", host)
}

// BaseConfigs returns the config digests of every base image Publish
// publishes (both months), so that a counter can tell base-config reads
// from other blob reads.
func BaseConfigs() ([]string, error) {
	var ds []string
	for _, m := range []string{"jan", "feb"} {
		b, err := newBases(m)
		if err != nil {
			return nil, err
		}
		for _, img := range []v1.Image{b.w22, b.w25, b.lin[0], b.lin[1]} {
			d, err := img.ConfigName()
			if err != nil {
				return nil, err
			}
			ds = append(ds, d.String())
		}
	}
	return ds, nil
}
