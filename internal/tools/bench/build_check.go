package main

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/imgctl/imgctl/snapshot"
)

// Finding names of the build cases.
const (
	findResult     = "result"
	findImages     = "images"
	findAttest     = "attestations"
	findWinOSV     = "os.version on Windows descriptors"
	findBaseAnnots = "base annotations"
)

const ()

// checkBuild reads what a build pushed (one index tag, or one reference per
// solve) and reports the images, attestation manifests, os.version on the
// Windows descriptors and the base.name/base.digest annotations.
func checkBuild(ctx context.Context, refs []string, windows bool) ([]finding, error) {
	var (
		indexes, images, attest, win, winOSV, winSingle, winConfigOSV, based int
		platforms                                                            []string
	)
	for _, r := range refs {
		ref, err := name.ParseReference(r, name.Insecure)
		if err != nil {
			return nil, err
		}
		desc, err := remote.Get(ref, remote.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("reading result %s: %w", r, err)
		}
		if !desc.MediaType.IsIndex() {
			// A single image pushed by digest: no descriptor carries its
			// platform, so os.version can only be in the config.
			img, err := desc.Image()
			if err != nil {
				return nil, err
			}
			cf, err := img.ConfigFile()
			if err != nil {
				return nil, err
			}
			m, err := img.Manifest()
			if err != nil {
				return nil, err
			}
			images++
			platforms = append(platforms, cf.OS+"/"+cf.Architecture)
			if cf.OS == "windows" {
				win++
				winSingle++
				winConfigOSV += boolInt(cf.OSVersion != "")
			}
			based += boolInt(m.Annotations[snapshot.AnnotationBaseName] != "" && m.Annotations[snapshot.AnnotationBaseDigest] != "")
			continue
		}
		indexes++
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, err
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return nil, err
		}
		for _, d := range im.Manifests {
			if d.Annotations[snapshot.AnnotationReferenceType] != "" {
				attest++
				continue
			}
			p := d.Platform
			if p == nil {
				p = &v1.Platform{}
			}
			images++
			platforms = append(platforms, p.OS+"/"+p.Architecture)
			if p.OS == "windows" {
				win++
				winOSV += boolInt(p.OSVersion != "")
			}
			img, err := idx.Image(d.Digest)
			if err != nil {
				return nil, err
			}
			m, err := img.Manifest()
			if err != nil {
				return nil, err
			}
			has := func(a map[string]string) bool {
				return a[snapshot.AnnotationBaseName] != "" && a[snapshot.AnnotationBaseDigest] != ""
			}
			based += boolInt(has(m.Annotations) || has(d.Annotations))
		}
	}
	result := "1 index"
	okResult := indexes == 1 && len(refs) == 1
	if !okResult {
		result = fmt.Sprintf("**%d separate pushes, %d index(es): needs a merge tool**", len(refs), indexes)
	}
	wantImages := len(buildLinux)
	if windows {
		wantImages += len(buildWindows)
	}
	fs := []finding{
		{findResult, result, okResult},
		{findImages, fmt.Sprintf("%d %v", images, platforms), images == wantImages},
		{findAttest, fmt.Sprint(attest), true},
	}
	if windows {
		if winSingle > 0 {
			// Pushed by digest, outside any index: no descriptor to carry it.
			fs = append(fs, finding{findWinOSV, fmt.Sprintf("**%d/%d: %d not in an index** (in their config %d/%d)",
				winOSV, win, winSingle, winConfigOSV, winSingle), false})
		} else {
			fs = append(fs, finding{findWinOSV, count(winOSV, win), win > 0 && winOSV == win})
		}
	}
	fs = append(fs, finding{findBaseAnnots, count(based, images), images > 0 && based == images})
	return fs, nil
}

// count is "n/of", in bold when short.
func count(n, of int) string {
	if n < of || of == 0 {
		return fmt.Sprintf("**%d/%d**", n, of)
	}
	return fmt.Sprintf("%d/%d", n, of)
}
