package verify

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/containerd/containerd/v2/core/content"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/platforms"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	digest "github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/imgctl/imgctl/platform"
)

// memStore is a content.Provider over blobs held in memory, so containerd's
// own images.Manifest can walk the indexes the test generates.
type memStore map[digest.Digest][]byte

type memReader struct{ *bytes.Reader }

func (memReader) Close() error { return nil }

func (m memStore) ReaderAt(_ context.Context, d ocispec.Descriptor) (content.ReaderAt, error) {
	b, ok := m[d.Digest]
	if !ok {
		return nil, fmt.Errorf("blob %s not found", d.Digest)
	}
	return memReader{bytes.NewReader(b)}, nil
}

// refComparer is containerd's MatchComparer for a node: platforms.Only on
// Linux, and on Windows the windowsMatchComparer that platforms.Default()
// builds there (restated because it is unexported).
type refComparer struct{ platforms.Matcher }

func (c refComparer) Less(p1, p2 ocispec.Platform) bool {
	m1, m2 := c.Match(p1), c.Match(p2)
	if m1 && m2 {
		return p1.OSVersion > p2.OSVersion
	}
	return m1 && !m2
}

func reference(host platform.Platform) platforms.MatchComparer {
	if host.OS != "windows" {
		return platforms.Only(platform.ToSpec(host))
	}
	return refComparer{platforms.NewMatcher(platform.ToSpec(host))}
}

var (
	builds    = []int{14393, 17763, 20348, 22621, 25398, 26100, 26200}
	revisions = []int{1, 9, 887, 2894, 3000, 3091, 9999, 33438, 33674}
)

// randomPlatform returns a platform for an index entry, sometimes with the
// quirks the engines treat differently.
func randomPlatform(r *rand.Rand) v1.Platform {
	switch r.IntN(10) {
	case 0:
		return v1.Platform{OS: "linux", Architecture: "amd64"}
	case 1:
		return v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
	case 2:
		return v1.Platform{OS: "windows", Architecture: "amd64"} // HostProcess
	case 3:
		return v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: []string{"10.0.x.1", "10.26100", "garbage", "10.0.26100"}[r.IntN(4)]}
	case 4:
		return v1.Platform{OS: "windows", Architecture: "arm64", OSVersion: fmt.Sprintf("10.0.%d.%d", builds[r.IntN(len(builds))], revisions[r.IntN(len(revisions))])}
	}
	p := v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: fmt.Sprintf("10.0.%d.%d", builds[r.IntN(len(builds))], revisions[r.IntN(len(revisions))])}
	if r.IntN(6) == 0 {
		p.OSFeatures = []string{[]string{"win32k", "gpu"}[r.IntN(2)]}
	}
	return p
}

// randomIndex builds an index of 1 to 6 images, some without a descriptor
// platform, and stores every blob for containerd.
func randomIndex(t *testing.T, r *rand.Rand, n int, store memStore) (v1.ImageIndex, ocispec.Descriptor) {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for i := range 1 + r.IntN(6) {
		p := randomPlatform(r)
		cf := &v1.ConfigFile{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant, OSVersion: p.OSVersion, OSFeatures: p.OSFeatures,
			Config: v1.Config{Labels: map[string]string{"seed": fmt.Sprintf("%d-%d", n, i)}}}
		img, err := mutate.ConfigFile(mutate.MediaType(empty.Image, types.OCIManifestSchema1), cf)
		if err != nil {
			t.Fatal(err)
		}
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
		add := mutate.IndexAddendum{Add: img}
		if r.IntN(5) != 0 {
			add.Descriptor.Platform = &p
		}
		idx = mutate.AppendManifests(idx, add)
		raw, _ := img.RawManifest()
		cfg, _ := img.RawConfigFile()
		d, _ := img.Digest()
		cd, _ := img.ConfigName()
		store[digest.Digest(d.String())] = raw
		store[digest.Digest(cd.String())] = cfg
	}
	raw, err := idx.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	d, _ := idx.Digest()
	store[digest.Digest(d.String())] = raw
	return idx, ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, Digest: digest.Digest(d.String()), Size: int64(len(raw))}
}

// TestDifferentialContainerd runs containerd's own images.Manifest with
// containerd's matcher as the oracle and checks that the containerd profile
// of resolve picks the same manifest on at least 10,000 (index, host) pairs.
func TestDifferentialContainerd(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	store := memStore{}
	var hosts []platform.Platform
	for _, b := range builds {
		hosts = append(hosts, platform.Platform{OS: "windows", Architecture: "amd64", OSVersion: fmt.Sprintf("10.0.%d", b)})
	}
	hosts = append(hosts,
		platform.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.2894"},
		platform.Platform{OS: "linux", Architecture: "amd64"},
		platform.Platform{OS: "linux", Architecture: "arm64"})
	ctx := context.Background()
	pairs, matched := 0, 0
	for n := range 1000 {
		idx, desc := randomIndex(t, r, n, store)
		for _, host := range hosts {
			pairs++
			want, werr := images.Manifest(ctx, store, desc, reference(host))
			got, gerr := ResolveIndex(idx, host, platform.ContainerdEngine())
			if (werr != nil) != (gerr != nil) {
				raw, _ := idx.RawManifest()
				t.Fatalf("index %d host %s: containerd err=%v, imgctl err=%v\n%s", n, platform.Format(host), werr, gerr, raw)
			}
			if werr != nil {
				continue
			}
			matched++
			img, err := idx.Image(got.Digest)
			if err != nil {
				t.Fatal(err)
			}
			cd, _ := img.ConfigName()
			if cd.String() != want.Config.Digest.String() {
				raw, _ := idx.RawManifest()
				t.Fatalf("index %d host %s: containerd picked config %s, imgctl picked %s (%s)\n%s", n, platform.Format(host), want.Config.Digest, cd, got.Digest, raw)
			}
		}
	}
	if pairs < 10000 || matched < pairs/10 {
		t.Fatalf("only %d pairs, %d with a match: the generator is too weak", pairs, matched)
	}
	t.Logf("%d pairs, %d with a selection", pairs, matched)
}
