package registry

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// ListTags returns the tags of repo (every page of the tags list, through
// go-containerregistry's remote.List on the registry's shared transport).
// imgctl lists only a repository it has just read from.
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
