package registry

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// ListTags returns the tags of repo: one GET of the tags list (more only
// when the registry pages its answer).
func (c *Client) ListTags(ctx context.Context, repo name.Repository) ([]string, error) {
	opts, err := c.Remote(ctx, repo)
	if err != nil {
		return nil, err
	}
	tags, err := remote.List(repo, opts...)
	if err != nil {
		return nil, fmt.Errorf("listing the tags of %s: %w", repo, err)
	}
	return tags, nil
}
