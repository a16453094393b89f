package rawmanifest

import "github.com/google/go-containerregistry/pkg/v1/types"

// Layer media types per family. A descriptor's media type can change
// without changing the blob: a Docker gzip layer and an OCI gzip layer are
// the same bytes, so converting keeps every digest and mounts the same blob.
var (
	ociLayers = map[types.MediaType]bool{
		types.OCILayer: true, types.OCILayerZStd: true, types.OCIUncompressedLayer: true,
		types.OCIRestrictedLayer: true, types.OCIUncompressedRestrictedLayer: true,
	}
	dockerLayers = map[types.MediaType]bool{
		types.DockerLayer: true, types.DockerForeignLayer: true, types.DockerUncompressedLayer: true,
	}
	dockerToOCI = map[types.MediaType]types.MediaType{
		types.DockerLayer:             types.OCILayer,
		types.DockerForeignLayer:      types.OCIRestrictedLayer,
		types.DockerUncompressedLayer: types.OCIUncompressedLayer,
	}
	ociToDocker = map[types.MediaType]types.MediaType{
		types.OCILayer:             types.DockerLayer,
		types.OCIRestrictedLayer:   types.DockerForeignLayer,
		types.OCIUncompressedLayer: types.DockerUncompressedLayer,
	}
)

// LayerMediaType returns the media type a layer of type mt gets in a
// manifest of type manifest: unchanged within the family, the equivalent
// type of the manifest's family otherwise (the mapping BuildKit's exporter
// applies with oci-mediatypes). ok is false for zstd and uncompressed
// non-distributable OCI layers in a Docker manifest, which have no Docker
// equivalent, and for types of neither family.
func LayerMediaType(mt, manifest types.MediaType) (_ types.MediaType, ok bool) {
	oci := manifest == types.OCIManifestSchema1
	switch {
	case oci && ociLayers[mt], !oci && dockerLayers[mt]:
		return mt, true
	case oci && dockerToOCI[mt] != "":
		return dockerToOCI[mt], true
	case !oci && ociToDocker[mt] != "":
		return ociToDocker[mt], true
	}
	return "", false
}
