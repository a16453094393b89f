// Command containerd runs one containerd release's own selection code on
// the cases imgctl's engine profiles are judged against (platform's golden
// tables). It is built once per release, each with its own module file
// (containerd-VERSION.mod beside go.mod), so every release brings the
// github.com/containerd/platforms version it pins.
//
// Two compositions are run for every case, on a Windows host whose spec is
// what containerd's DefaultSpec() gives on that node (windows/amd64,
// os.version "10.0.BUILD", no revision):
//   - "default": images.Manifest of the release with the platforms
//     package's Windows Default(), the MatchComparer a containerd node uses;
//   - "only": images.Manifest with platforms.Only(host), the comparer
//     Docker's containerd image store uses.
//
// Default() and the platform matchers live in files platforms compiles only
// for Windows (defaults_windows.go, and in v0.2.1 platforms_windows.go and
// platform_compat_windows.go). imgctl's generator (internal/testing/enginegolden)
// adds those files, unchanged but for two renames and the host that
// DefaultSpec reads, to the build through `go build -overlay`, so the code
// that runs here is the release's own. The one line that still sees Linux is
// rc.1+'s `if runtime.GOOS == "windows"` in NewMatcher, which only chooses
// the wrapper type a matcher is returned in; Match is the same either way.
//
// Input on stdin and output on stdout are JSON (see input and output).
package main

import (
	"bytes"
	"context"
	_ "crypto/sha256" // go-digest needs it registered
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"

	"github.com/containerd/platforms"
	digest "github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// input is what the generator sends: the cases to decide.
type input struct {
	Cases []inCase `json:"cases"`
}

// inCase is one host and one index.
type inCase struct {
	// Host is the node's os.version, "10.0.BUILD".
	Host    string  `json:"host"`
	Entries []entry `json:"entries"`
}

// entry is one child of the index: its descriptor platform (nil when the
// descriptor has none) and the platform fields of its image config.
type entry struct {
	Platform *ocispec.Platform `json:"platform,omitempty"`
	Config   ocispec.Platform  `json:"config"`
}

// output holds, per case, the position of the entry each composition runs,
// or -1 when images.Manifest finds no match.
type output struct {
	Platforms string `json:"platforms"`
	Default   []int  `json:"default"`
	Only      []int  `json:"only"`
}

const entryAnnotation = "io.imgctl.golden.entry"

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, "reading cases:", err)
		os.Exit(2)
	}
	out := output{Platforms: platformsVersion()}
	for _, c := range in.Cases {
		host := ocispec.Platform{OS: "windows", Architecture: "amd64", OSVersion: c.Host}
		platforms.ImgctlSetWindowsHost(host)
		store, index, err := newStore(c.Entries)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		out.Default = append(out.Default, pick(store, index, platforms.ImgctlWindowsDefault()))
		out.Only = append(out.Only, pick(store, index, platforms.Only(host)))
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// pick runs the release's images.Manifest and names the entry it returned.
func pick(s memStore, index ocispec.Descriptor, mc platforms.MatchComparer) int {
	m, err := manifest(context.Background(), s, index, mc)
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(m.Annotations[entryAnnotation])
	if err != nil {
		fmt.Fprintln(os.Stderr, "manifest without its entry annotation:", err)
		os.Exit(2)
	}
	return n
}

// memStore is a content store in memory, keyed by digest.
type memStore map[digest.Digest][]byte

func (s memStore) add(mediaType string, v any) (ocispec.Descriptor, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	d := digest.FromBytes(b)
	s[d] = b
	return ocispec.Descriptor{MediaType: mediaType, Digest: d, Size: int64(len(b))}, nil
}

// newStore writes each entry's config and manifest, and the index over them.
func newStore(entries []entry) (memStore, ocispec.Descriptor, error) {
	s := memStore{}
	idx := ocispec.Index{MediaType: ocispec.MediaTypeImageIndex}
	idx.SchemaVersion = 2
	for i, e := range entries {
		cfg := ocispec.Image{Platform: e.Config, RootFS: ocispec.RootFS{Type: "layers"}}
		cd, err := s.add(ocispec.MediaTypeImageConfig, cfg)
		if err != nil {
			return nil, ocispec.Descriptor{}, err
		}
		m := ocispec.Manifest{
			MediaType:   ocispec.MediaTypeImageManifest,
			Config:      cd,
			Layers:      []ocispec.Descriptor{},
			Annotations: map[string]string{entryAnnotation: strconv.Itoa(i)},
		}
		m.SchemaVersion = 2
		md, err := s.add(ocispec.MediaTypeImageManifest, m)
		if err != nil {
			return nil, ocispec.Descriptor{}, err
		}
		md.Platform = e.Platform
		idx.Manifests = append(idx.Manifests, md)
	}
	d, err := s.add(ocispec.MediaTypeImageIndex, idx)
	return s, d, err
}

// provider is memStore as the linked release's content.Provider. Only
// the import paths of content and images differ between containerd 1.7
// and 2.x, so images_v1.go and images_v2.go (one chosen by the
// containerd1 build tag, since each release module links one line) name
// just contentReaderAt and imagesManifest.
type provider struct{ memStore }

func (p provider) ReaderAt(_ context.Context, desc ocispec.Descriptor) (contentReaderAt, error) {
	return p.reader(desc)
}

// manifest is the release's images.Manifest over the store.
func manifest(ctx context.Context, s memStore, index ocispec.Descriptor, mc platforms.MatchComparer) (ocispec.Manifest, error) {
	return imagesManifest(ctx, provider{s}, index, mc)
}

// readerAt is the content.ReaderAt both containerd lines define.
type readerAt struct {
	*bytes.Reader
}

func (r readerAt) Close() error { return nil }

func (s memStore) reader(desc ocispec.Descriptor) (readerAt, error) {
	b, ok := s[desc.Digest]
	if !ok {
		return readerAt{}, fmt.Errorf("blob %s: not found", desc.Digest)
	}
	return readerAt{bytes.NewReader(b)}, nil
}

// platformsVersion is the github.com/containerd/platforms version linked.
func platformsVersion() string {
	bi, _ := debug.ReadBuildInfo()
	for _, d := range bi.Deps {
		if d.Path == "github.com/containerd/platforms" {
			return d.Version
		}
	}
	return "unknown"
}
