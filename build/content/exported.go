package content

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	contentapi "github.com/containerd/containerd/api/services/content/v1"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"
	"golang.org/x/sync/errgroup"

	"github.com/imgctl/imgctl/index"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// Exported is what one solve pushed: its top descriptor (an index or a
// manifest), the raw bytes of that top manifest, and its images.
type Exported struct {
	// Top is the descriptor of what the solve pushed.
	Top v1.Descriptor
	// Raw is the top manifest's bytes.
	Raw []byte
	// Images are the pushed images (none when ReadExported was not asked
	// for them).
	Images []ExportedImage
	// Attestations are the attestation manifests of an index, as listed.
	Attestations []v1.Descriptor
	// Prepared, when set, are the children to publish in place of Images
	// and Attestations: a grafted Windows image and its attestations (see
	// package graft's Graft.Apply).
	Prepared []index.Prepared
}

// ExportedImage is one pushed image with the platform its config states.
type ExportedImage struct {
	// Descriptor is the image's, its platform from its config.
	Descriptor v1.Descriptor
	// Config is the image's config.
	Config *v1.ConfigFile
	// Layers are the manifest's layers, as pushed.
	Layers []v1.Descriptor
}

// BlobSource reads a manifest or blob of a solve's result by descriptor.
type BlobSource interface {
	// Read reads d whole; manifest says that d is a manifest rather than
	// a blob.
	Read(ctx context.Context, d v1.Descriptor, manifest bool) ([]byte, error)
}

// Daemon reads what a solve exported from the daemon's content
// store over the same gRPC connection (BuildKit's content API, which keeps
// an exported image for its build-history record), and falls back to the
// registry the solve pushed to. Reading back from the daemon costs no
// registry request: the merge then only PUTs the index. Each read is one
// Read call: containerd's content proxy would ask for Info first.
type Daemon struct {
	content contentapi.ContentClient
	repo    name.Repository
	rc      *registry.Client
}

// maxExportedBlob bounds a manifest or config read from the daemon, as
// registry bounds one read from a registry.
const maxExportedBlob = registry.MaxManifestSize

// NewDaemon reads what a solve pushed into repo from the daemon's
// content API (client.Client.ContentClient), else through rc.
func NewDaemon(content contentapi.ContentClient, repo name.Repository, rc *registry.Client) *Daemon {
	return &Daemon{content: content, repo: repo, rc: rc}
}

// Read reads d from the daemon, else from the registry.
func (dc *Daemon) Read(ctx context.Context, d v1.Descriptor, manifest bool) ([]byte, error) {
	if dt, err := dc.readDaemon(ctx, d); err == nil {
		return dt, nil
	}
	ref := dc.repo.Digest(d.Digest.String())
	if manifest {
		desc, err := dc.rc.Get(ctx, ref)
		if err != nil {
			return nil, err
		}
		return desc.Manifest, nil
	}
	return dc.rc.SmallBlob(ctx, ref)
}

// readDaemon reads d whole from the daemon and checks its digest.
func (dc *Daemon) readDaemon(ctx context.Context, d v1.Descriptor) ([]byte, error) {
	if d.Size <= 0 || d.Size > maxExportedBlob {
		return nil, fmt.Errorf("blob %s: size %d", d.Digest, d.Size)
	}
	return ReadBlob(ctx, dc.content, d.Digest, d.Size)
}

// ReadBlob reads blob dgst whole from a daemon's content store in one
// Read call and checks its digest, and its size when size > 0; without a
// size it reads at most maxExportedBlob bytes.
func ReadBlob(ctx context.Context, content contentapi.ContentClient, dgst v1.Hash, size int64) ([]byte, error) {
	limit := size
	if limit <= 0 {
		limit = maxExportedBlob
	}
	ctx, cancel := context.WithCancel(ctx) // ends the stream on an early return
	defer cancel()
	rc, err := content.Read(ctx, &contentapi.ReadContentRequest{Digest: dgst.String()})
	if err != nil {
		return nil, err
	}
	var buf []byte
	for {
		r, err := rc.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if int64(len(buf)+len(r.Data)) > limit {
			return nil, fmt.Errorf("blob %s: more than %d bytes", dgst, limit)
		}
		buf = append(buf, r.Data...)
	}
	if h, _, err := v1.SHA256(bytes.NewReader(buf)); err != nil || h != dgst || (size > 0 && int64(len(buf)) != size) {
		return nil, fmt.Errorf("blob %s: content differs", dgst)
	}
	return buf, nil
}

// TopDescriptor is the descriptor of what a solve pushed, from its
// exporter response.
func TopDescriptor(resp map[string]string) (v1.Descriptor, error) {
	var d v1.Descriptor
	if s := resp[exptypes.ExporterImageDescriptorKey]; s != "" {
		dt, err := base64.StdEncoding.DecodeString(s)
		if err == nil {
			err = json.Unmarshal(dt, &d)
		}
		if err == nil && d.Size > 0 && d.MediaType != "" {
			return d, nil
		}
	}
	return v1.Descriptor{}, fmt.Errorf("no image descriptor in the exporter response (digest %q)", resp[exptypes.ExporterImageDigestKey])
}

// ReadExported reads the result of one solve: the top manifest and, with
// images, each image's manifest and config, concurrently (attestation
// manifests are listed, not read).
func ReadExported(ctx context.Context, src BlobSource, top v1.Descriptor, images bool) (*Exported, error) {
	raw, err := src.Read(ctx, top, true)
	if err != nil {
		return nil, fmt.Errorf("reading pushed %s: %w", top.Digest, err)
	}
	ex := &Exported{Top: top, Raw: raw}
	var descs []v1.Descriptor
	switch {
	case top.MediaType.IsIndex():
		im, err := v1.ParseIndexManifest(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("reading pushed index %s: %w", top.Digest, err)
		}
		for _, d := range im.Manifests {
			if snapshot.IsAttestation(d) {
				ex.Attestations = append(ex.Attestations, d)
			} else {
				descs = append(descs, d)
			}
		}
	case top.MediaType.IsImage():
		descs = []v1.Descriptor{top}
	default:
		return nil, fmt.Errorf("pushed %s: unsupported media type %q", top.Digest, top.MediaType)
	}
	if !images {
		return ex, nil
	}
	ex.Images = make([]ExportedImage, len(descs))
	g, gctx := errgroup.WithContext(ctx)
	for i, d := range descs {
		g.Go(func() error {
			var err error
			ex.Images[i], err = readExportedImage(gctx, src, d, raw, top)
			return err
		})
	}
	return ex, g.Wait()
}

func readExportedImage(ctx context.Context, src BlobSource, d v1.Descriptor, topRaw []byte, top v1.Descriptor) (ExportedImage, error) {
	mraw := topRaw
	if d.Digest != top.Digest {
		var err error
		if mraw, err = src.Read(ctx, d, true); err != nil {
			return ExportedImage{}, fmt.Errorf("reading pushed manifest %s: %w", d.Digest, err)
		}
	}
	m, err := v1.ParseManifest(bytes.NewReader(mraw))
	if err != nil {
		return ExportedImage{}, fmt.Errorf("reading pushed manifest %s: %w", d.Digest, err)
	}
	craw, err := src.Read(ctx, m.Config, false)
	if err != nil {
		return ExportedImage{}, fmt.Errorf("reading config of %s: %w", d.Digest, err)
	}
	cf, err := v1.ParseConfigFile(bytes.NewReader(craw))
	if err != nil {
		return ExportedImage{}, fmt.Errorf("reading config of %s: %w", d.Digest, err)
	}
	desc := v1.Descriptor{MediaType: d.MediaType, Digest: d.Digest, Size: d.Size, Annotations: d.Annotations}
	if desc.MediaType == "" {
		desc.MediaType = types.MediaType(m.MediaType)
	}
	desc.Platform = cf.Platform()
	if d.Platform != nil && desc.Platform != nil && desc.Platform.Variant == "" {
		desc.Platform.Variant = d.Platform.Variant
	}
	return ExportedImage{Descriptor: desc, Config: cf, Layers: m.Layers}, nil
}
