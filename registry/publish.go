package registry

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TagState is what a tag holds before a publish.
type TagState struct {
	// Existing is the digest the tag points at, nil when it is absent.
	Existing *v1.Hash
	// Want is the digest to publish.
	Want v1.Hash
}

// Same reports whether the tag already holds Want: publishing is a no-op.
func (s TagState) Same() bool { return s.Existing != nil && *s.Existing == s.Want }

// Overwrites reports whether publishing replaces another digest.
func (s TagState) Overwrites() bool { return s.Existing != nil && *s.Existing != s.Want }

// CheckTag applies imgctl's tag rule to publishing want at tag, with one
// HEAD: tags are immutable, so a tag that holds another digest is refused
// with ErrTagExists unless force; a tag that holds want is a no-op for the
// caller to report (TagState.Same). hint names the flag that overrides the
// rule on the calling verb ("--force"), or is empty where there is none.
//
// A registry has no create-if-absent for tags, so the check narrows the
// window in which another writer can take the tag; it cannot close it.
func (c *Client) CheckTag(ctx context.Context, tag name.Tag, want v1.Hash, force bool, hint string) (TagState, error) {
	h, err := c.Head(ctx, tag)
	st := TagState{Existing: h, Want: want}
	if err != nil {
		return st, err
	}
	return st, st.Rule(tag, force, hint)
}

// Rule applies the tag rule to a tag already read: ErrTagExists when the
// tag holds another digest and force is false.
func (s TagState) Rule(tag name.Tag, force bool, hint string) error {
	if !s.Overwrites() || force {
		return nil
	}
	return TagExistsError(tag, *s.Existing, hint)
}

// TagExistsError is the ErrTagExists error for tag, which points at have;
// hint names the flag that overrides the rule, or is empty.
func TagExistsError(tag name.Tag, have v1.Hash, hint string) error {
	if hint == "" {
		return fmt.Errorf("%w %s (it points at %s)", ErrTagExists, tag, have)
	}
	return fmt.Errorf("%w %s (it points at %s; use %s to overwrite)", ErrTagExists, tag, have, hint)
}

// Publish tags an index, children first: present makes every child (and
// whatever must go with them) present in the tag's repository, through the
// Copier it is given, and only when it succeeds is idx PUT with its exact
// bytes at tag. Nothing is tagged unless every child is present. Call
// CheckTag first.
func (c *Client) Publish(ctx context.Context, tag name.Tag, idx Manifest, present func(context.Context, *Copier) error) error {
	cp := c.Copier(tag.Context())
	if present != nil {
		if err := present(ctx, cp); err != nil {
			return err
		}
	}
	if err := cp.Put(ctx, tag, idx); err != nil {
		return fmt.Errorf("tagging %s: %w", tag, err)
	}
	return nil
}
