package skeleton

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/disttest"
	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
)

// notes collects what a RegistryCache notes.
type notes struct {
	mu sync.Mutex
	l  []string
}

func (n *notes) add(s string) { n.mu.Lock(); n.l = append(n.l, s); n.mu.Unlock() }

func (n *notes) text() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.l, "\n")
}

// baseSkeleton is the skeleton of the first layer of a nanoserver-shaped
// base, as writeSkeleton makes it, and that layer's digest.
func baseSkeleton(t *testing.T) ([]byte, v1.Hash) {
	t.Helper()
	img, err := regtest.WindowsBaseImage(regtest.OSVersionLTSC2025)
	if err != nil {
		t.Fatal(err)
	}
	ls := regtest.Must(img.Layers())(t)
	var b bytes.Buffer
	if err := writeSkeleton(&b, ls[0]); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), regtest.Must(ls[0].Digest())(t)
}

// TestRegistryCacheRoundTrip files a skeleton in the CNCF distribution
// registry (htpasswd auth) and reads it back from a second cache, as a
// fresh runner would: the entry is the documented artifact, and a second
// Put of the same layer writes nothing.
func TestRegistryCacheRoundTrip(t *testing.T) {
	r := disttest.New(t, disttest.Options{})
	ctx := context.Background()
	skel, layer := baseSkeleton(t)
	repo := regtest.Must(name.NewRepository(r.Host() + "/app"))(t)
	var n notes
	first := NewRegistryCache(registry.New(), repo, false, n.add)
	if _, ok := first.Get(ctx, layer); ok {
		t.Fatal("an empty repository has an entry")
	}
	first.Put(ctx, layer, skel)

	desc, err := remote.Get(repo.Tag(Tag(layer)), r.Remote()...)
	if err != nil {
		t.Fatalf("the entry's tag: %v", err)
	}
	var m struct {
		MediaType    string            `json:"mediaType"`
		ArtifactType string            `json:"artifactType"`
		Config       v1.Descriptor     `json:"config"`
		Layers       []v1.Descriptor   `json:"layers"`
		Annotations  map[string]string `json:"annotations"`
	}
	if err := json.Unmarshal(desc.Manifest, &m); err != nil {
		t.Fatal(err)
	}
	if m.ArtifactType != ArtifactType || m.Config.MediaType != "application/vnd.oci.empty.v1+json" ||
		len(m.Layers) != 1 || m.Layers[0].Size != int64(len(skel)) ||
		m.Annotations[AnnotationLayer] != layer.String() || m.Annotations[AnnotationFormat] != Format {
		t.Errorf("entry manifest:\n%s", desc.Manifest)
	}

	second := NewRegistryCache(registry.New(), repo, true, n.add)
	got, ok := second.Get(ctx, layer)
	if !ok || !bytes.Equal(got, skel) {
		t.Fatalf("a fresh cache read %d bytes (ok %v), want the %d filed", len(got), ok, len(skel))
	}
	if hits, read := second.Stats(); hits != 1 || read != int64(len(skel)) {
		t.Errorf("stats %d hits, %d bytes", hits, read)
	}
	r.ResetRequests()
	second.Put(ctx, layer, skel)
	if puts := r.Count("PUT", "/manifests/"); puts != 0 {
		t.Errorf("a second Put of a filed layer sent %d manifest PUTs", puts)
	}
	if s := n.text(); s != "" {
		t.Errorf("notes: %s", s)
	}
}

// TestRegistryCacheConcurrentWriters: builds on several runners file the
// same layer at once; every Put succeeds, the tag holds one entry, and it
// reads back.
func TestRegistryCacheConcurrentWriters(t *testing.T) {
	r := disttest.New(t, disttest.Options{})
	ctx := context.Background()
	skel, layer := baseSkeleton(t)
	repo := regtest.Must(name.NewRepository(r.Host() + "/app"))(t)
	var n notes
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { NewRegistryCache(registry.New(), repo, false, n.add).Put(ctx, layer, skel) })
	}
	wg.Wait()
	if s := n.text(); s != "" {
		t.Errorf("concurrent writers noted: %s", s)
	}
	if got, ok := NewRegistryCache(registry.New(), repo, false, n.add).Get(ctx, layer); !ok || !bytes.Equal(got, skel) {
		t.Errorf("read back %d bytes, ok %v", len(got), ok)
	}
}

// TestRegistryCachePoisoned: entries that are not the skeleton of the layer
// they are filed under are ignored, each with a note saying why, and a
// build makes the skeleton again.
func TestRegistryCachePoisoned(t *testing.T) {
	reg := regtest.New(t)
	ctx := context.Background()
	skel, layer := baseSkeleton(t)
	other := regtest.Must(v1.NewHash("sha256:" + strings.Repeat("ab", 32)))(t)
	cases := []struct {
		name  string
		layer v1.Hash // the layer the entry says it was made from
		blob  []byte
		want  string
	}{
		{"entry outside the Windows layout", layer, regtest.TarGz(t, [2]string{"Files/", ""}, [2]string{"evil/", ""}, [2]string{"evil/run.cmd", ""}), "outside the Windows layout"},
		{"file content", layer, regtest.TarGz(t, [2]string{"Files/", ""}, [2]string{"Files/Windows/System32/cmd.exe", "MZ payload"}), "has content"},
		{"another layer's skeleton", other, skel, "filed under layer"},
		{"not gzip", layer, []byte("not a skeleton"), ErrEntry.Error()},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo := regtest.Must(name.NewRepository(reg.Host() + "/poisoned" + string(rune('a'+i))))(t)
			var n notes
			writer := NewRegistryCache(registry.New(), repo, false, n.add)
			tag := repo.Tag(Tag(layer))
			if err := writer.put(ctx, tag, entryKey{h: c.layer}, c.blob); err != nil {
				t.Fatal(err)
			}
			got, ok := NewRegistryCache(registry.New(), repo, false, n.add).Get(ctx, layer)
			if ok {
				t.Fatalf("the poisoned entry was used (%d bytes)", len(got))
			}
			if s := n.text(); !strings.Contains(s, "ignoring the entry") || !strings.Contains(s, c.want) {
				t.Errorf("note %q, want it to say %q", s, c.want)
			}
		})
	}
	if err := Check(skel); err != nil {
		t.Errorf("a real skeleton: %v", err)
	}
}

// TestRegistryCacheReadOnly: distribution in its read-only mode refuses
// every write. A cache the user named is then neither written nor read,
// even when it holds an entry (the build may not write it, so its entries
// are not trusted); the target repository's cache notes the refused write
// once and the build goes on with its local cache.
func TestRegistryCacheReadOnly(t *testing.T) {
	r := disttest.New(t, disttest.Options{})
	ctx := context.Background()
	skel, layer := baseSkeleton(t)
	repo := regtest.Must(name.NewRepository(r.Host() + "/app"))(t)
	var n notes
	NewRegistryCache(registry.New(), repo, false, n.add).Put(ctx, layer, skel)
	if err := r.RestartReadOnly(true); err != nil {
		t.Fatal(err)
	}

	explicit := NewRegistryCache(registry.New(), repo, true, n.add)
	if _, ok := explicit.Get(ctx, layer); ok {
		t.Error("read an entry from a repository the build may not write")
	}
	if s := n.text(); !strings.Contains(s, "may not write it") {
		t.Errorf("notes %q, want the refused write check", s)
	}
	n = notes{}
	other := regtest.Must(v1.NewHash("sha256:" + strings.Repeat("cd", 32)))(t)
	target := NewRegistryCache(registry.New(), repo, false, n.add)
	target.Put(ctx, other, skel)
	target.Put(ctx, layer, skel) // off now: no request, no second note
	if s := n.text(); strings.Count(s, "filing the skeleton") != 1 || !strings.Contains(s, "skeletons stay in the local cache") {
		t.Errorf("notes %q, want one note of the refused write", s)
	}
	if err := registry.New().Copier(repo).CheckWrite(ctx); err == nil {
		t.Error("CheckWrite passed on a read-only registry")
	}
}
