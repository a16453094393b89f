package content

import (
	"context"
	"errors"
	"io"
	"testing"

	contentapi "github.com/containerd/containerd/api/services/content/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"google.golang.org/grpc"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
)

// memContent is a daemon content API holding some blobs, for fault
// injection: what it lacks is "not found", and a blob may be held
// corrupted. It sends each blob in two messages, as a stream may.
type memContent struct {
	contentapi.ContentClient
	blobs map[string][]byte
}

func (m *memContent) Read(_ context.Context, in *contentapi.ReadContentRequest, _ ...grpc.CallOption) (contentapi.Content_ReadClient, error) {
	dt, ok := m.blobs[in.Digest]
	if !ok {
		return nil, errors.New("not found")
	}
	half := len(dt) / 2
	return &memStream{msgs: [][]byte{dt[:half], dt[half:]}}, nil
}

type memStream struct {
	grpc.ClientStream
	msgs [][]byte
}

func (s *memStream) Recv() (*contentapi.ReadContentResponse, error) {
	if len(s.msgs) == 0 {
		return nil, io.EOF
	}
	m := s.msgs[0]
	s.msgs = s.msgs[1:]
	return &contentapi.ReadContentResponse{Data: m}, nil
}

// TestReadExported reads a pushed Windows image from the daemon's content
// store without a registry request; a blob the store lacks, or holds with
// other bytes, is read from the registry instead.
func TestReadExported(t *testing.T) {
	ctx := context.Background()
	reg := regtest.New(t)
	img := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2022))(t)
	ref, _, err := reg.PushTag("app:1", img)
	if err != nil {
		t.Fatal(err)
	}
	raw := regtest.Must(img.RawManifest())(t)
	cfg := regtest.Must(img.RawConfigFile())(t)
	m := regtest.Must(img.Manifest())(t)
	top := *regtest.Must(partial.Descriptor(img))(t)
	for _, c := range []struct {
		name  string
		blobs map[string][]byte
		want  int // registry requests
	}{
		{"all in the store", map[string][]byte{top.Digest.String(): raw, m.Config.Digest.String(): cfg}, 0},
		{"config missing", map[string][]byte{top.Digest.String(): raw}, 1},
		{"manifest corrupted", map[string][]byte{top.Digest.String(): append([]byte(" "), raw[1:]...), m.Config.Digest.String(): cfg}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dc := NewDaemon(&memContent{blobs: c.blobs}, ref.Context(), registry.New())
			reg.ResetStats()
			ex, err := ReadExported(ctx, dc, top, true)
			if err != nil {
				t.Fatal(err)
			}
			st := reg.Stats()
			if got := st.Manifests + st.Blobs; got != c.want {
				t.Errorf("%d registry reads, want %d (%s)", got, c.want, st)
			}
			p := ex.Images[0].Descriptor.Platform
			if len(ex.Images) != 1 || p == nil || p.OS != "windows" || p.OSVersion != regtest.OSVersionLTSC2022 || ex.Images[0].Descriptor.Digest != top.Digest {
				t.Errorf("images %+v", ex.Images)
			}
		})
	}
}
