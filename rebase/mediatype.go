package rebase

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/imgctl/imgctl/internal/rawmanifest"
)

// layerMediaType returns the media type a base layer of type mt gets in a
// manifest of type manifest (rawmanifest.LayerMediaType); types with no
// equivalent in the manifest's family are refused with ErrMediaType.
func layerMediaType(mt, manifest types.MediaType) (types.MediaType, error) {
	if got, ok := rawmanifest.LayerMediaType(mt, manifest); ok {
		return got, nil
	}
	return "", fmt.Errorf("%w: %s in a %s manifest", ErrMediaType, mt, manifest)
}
