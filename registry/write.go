package registry

import (
	"context"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// WriteImage writes img and tags it, with go-containerregistry's
// remote.Write through the client's transport: its layers are mounted
// from where they were read when that is the same registry, else
// uploaded. It is for tags that are rewritten by design, such as cosign's
// signature tags (sign.Merge appends to one); it applies no tag rule and
// reads nothing back. A release tag goes through CheckTag and Publish.
func (c *Client) WriteImage(ctx context.Context, tag name.Tag, img v1.Image) error {
	opts, err := c.Remote(ctx, tag.Context())
	if err != nil {
		return err
	}
	return remote.Write(tag, img, opts...)
}
