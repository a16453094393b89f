package build

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"

	contentapi "github.com/containerd/containerd/api/services/content/v1"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"google.golang.org/grpc"

	"github.com/imgctl/imgctl/build/content"
	"github.com/imgctl/imgctl/build/variant"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// TestTagsDirectly: only one solve of several platforms, none Windows, is
// tagged by BuildKit; a single platform (a manifest, not an index) and
// anything with Windows (os.version on the descriptor) are merged.
func TestTagsDirectly(t *testing.T) {
	la := v1.Platform{OS: "linux", Architecture: "amd64"}
	lb := v1.Platform{OS: "linux", Architecture: "arm64"}
	w := v1.Platform{OS: "windows", Architecture: "amd64"}
	for _, c := range []struct {
		variants [][]v1.Platform
		alsoTags int
		want     bool
	}{
		{[][]v1.Platform{{la, lb}}, 1, false},
		{[][]v1.Platform{{la, lb}}, 0, true},
		{[][]v1.Platform{{la}}, 0, false},
		{[][]v1.Platform{{la, w}}, 0, false},
		{[][]v1.Platform{{la, lb}, {w}}, 0, false},
	} {
		p := &Plan{alsoTags: c.alsoTags}
		for _, ps := range c.variants {
			p.Variants = append(p.Variants, variant.Variant{Platforms: ps})
		}
		if got := p.tagsDirectly(); got != c.want {
			t.Errorf("%v, %d more tags: %t, want %t", c.variants, c.alsoTags, got, c.want)
		}
	}
}

// noContent is a daemon content API that holds nothing: what a solve
// pushed is read back from the registry.
type noContent struct{ contentapi.ContentClient }

func (noContent) Read(context.Context, *contentapi.ReadContentRequest, ...grpc.CallOption) (contentapi.Content_ReadClient, error) {
	return nil, errors.New("not found")
}

// TestPublishKeepsAttestations merges what two solves pushed, each an
// index of an image and the attestation manifest BuildKit attached to it:
// the published index holds both images and both attestation manifests,
// each still naming an image of the index.
func TestPublishKeepsAttestations(t *testing.T) {
	ctx := context.Background()
	reg := regtest.New(t)
	lin := regtest.Must(regtest.LinuxImage("amd64"))(t)
	win := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2022))(t)
	tag, err := name.NewTag(reg.Host()+"/app:1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	var exps []*content.Exported
	var p Plan
	want := map[v1.Hash]bool{}
	for i, img := range []v1.Image{lin, win} {
		att := regtest.Must(regtest.AttestationEntry(img))(t)
		solved := regtest.Must(regtest.Index(regtest.Entry{Image: img}, att))(t)
		_, d, err := reg.PushTag(fmt.Sprintf("app:solve-%d", i), solved)
		if err != nil {
			t.Fatal(err)
		}
		top := v1.Descriptor{MediaType: types.OCIImageIndex, Digest: d, Size: int64(len(regtest.Must(solved.RawManifest())(t)))}
		dc := content.NewDaemon(noContent{}, tag.Context(), registry.New())
		ex, err := content.ReadExported(ctx, dc, top, true)
		if err != nil {
			t.Fatal(err)
		}
		exps = append(exps, ex)
		p.Variants = append(p.Variants, variant.Variant{Platforms: []v1.Platform{*ex.Images[0].Descriptor.Platform}})
		want[regtest.Must(img.Digest())(t)] = true
	}
	res, err := (&run{p: &p, o: &Options{Tag: tag}, rc: registry.New()}).publish(ctx, exps)
	if err != nil {
		t.Fatal(err)
	}
	images, atts := map[v1.Hash]bool{}, 0
	for _, d := range res.Plan.Manifest.Manifests {
		if !snapshot.IsAttestation(d) {
			images[d.Digest] = true
		}
	}
	for _, d := range res.Plan.Manifest.Manifests {
		if snapshot.IsAttestation(d) {
			atts++
			if subj, ok := snapshot.Subject(d); !ok || !images[subj] {
				t.Errorf("attestation %s names %v, not an image of the index", d.Digest, d.Annotations)
			}
		}
	}
	if !maps.Equal(images, want) || atts != 2 {
		t.Errorf("index images %v and %d attestations, want %v and 2", images, atts, want)
	}
}
