package registry

import (
	"bytes"
	"context"
	"fmt"
	"strings"

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
//
// Then Publish reads the tag back with one HEAD and fails with
// ErrTagChanged when it no longer holds idx's digest. The distribution
// spec has no conditional manifest PUT (no create-if-absent, no
// if-match), so two writers of one tag race; with A this run and B another
// writer of the same tag:
//   - B's PUT lands before A's tag check: A refuses with ErrTagExists
//     (CheckTag), unless forced.
//   - B's PUT lands between A's PUT and A's read-back: A fails with
//     ErrTagChanged, and does not report a tag it lost. This is what the
//     read-back adds, and a registry's delete of the tag in that window is
//     caught the same way.
//   - B's PUT lands between A's check and A's PUT: A overwrites B. If B is
//     imgctl and reads back after A's PUT, B fails with ErrTagChanged;
//     if B read back before, both succeed and B's tag is lost.
//   - B's PUT lands after A's read-back: A checks, B checks, A PUTs, A reads
//     back, B PUTs, B reads back; both succeed and A's tag is lost. No
//     client can catch this.
//
// Only the registry can close the window: make release tags immutable
// there (Harbor tag immutability rules, ECR IMMUTABLE repositories, ACR
// locks); imgctl maps their refusals to ErrTagExists (ImmutableTagError).
// The read-back costs one HEAD per publish. A registry that served a
// stale tag right after a PUT would make Publish fail with ErrTagChanged
// (exit 2, and a re-run finds the tag at imgctl's digest), never pass
// wrongly.
func (c *Client) Publish(ctx context.Context, tag name.Tag, idx Manifest, present func(context.Context, *Copier) error) error {
	return c.PublishTags(ctx, []name.Tag{tag}, idx, present)
}

// PublishTags is Publish for several tags of one repository (imgctl's
// repeatable -t): present runs once, then idx is PUT and read back at each
// tag in order. All tags must be in one repository (ErrTagsRepository,
// before any write). A registry gives no transaction over several tags,
// so a refusal at the first tag writes nothing, and a refusal at a later
// one stops there: the tags before it point at idx, complete, and the
// rest are untouched. That is reported per tag by *TagsError, which wraps
// the refusal (errors.Is ErrTagExists, ErrTagChanged, ...). Re-running
// finishes the job: the tags already at idx are the same digest.
func (c *Client) PublishTags(ctx context.Context, tags []name.Tag, idx Manifest, present func(context.Context, *Copier) error) error {
	if len(tags) == 0 {
		return fmt.Errorf("%w: no tag to publish", ErrTagsRepository)
	}
	if err := SameRepository(tags); err != nil {
		return err
	}
	raw, err := idx.RawManifest()
	if err != nil {
		return err
	}
	want, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	cp := c.Copier(tags[0].Context())
	if present != nil {
		if err := present(ctx, cp); err != nil {
			return err
		}
	}
	for i, tag := range tags {
		if err := c.putTag(ctx, cp, tag, idx, want); err != nil {
			if i == 0 {
				return err
			}
			return &TagsError{Tagged: tags[:i], Failed: tag, Untouched: tags[i+1:], Digest: want, Err: err}
		}
	}
	return nil
}

// putTag PUTs idx at tag and reads the tag back (see Publish).
func (c *Client) putTag(ctx context.Context, cp *Copier, tag name.Tag, idx Manifest, want v1.Hash) error {
	if err := cp.Put(ctx, tag, idx); err != nil {
		return fmt.Errorf("tagging %s: %w", tag, err)
	}
	got, err := c.Head(ctx, tag)
	switch {
	case err != nil:
		return fmt.Errorf("reading back %s: %w", tag, err)
	case got == nil:
		return fmt.Errorf("%w: %s is gone right after imgctl tagged it %s", ErrTagChanged, tag, want)
	case *got != want:
		return fmt.Errorf("%w: %s points at %s right after imgctl tagged it %s: another writer tagged it "+
			"(make the tag immutable in the registry to prevent that)", ErrTagChanged, tag, got, want)
	}
	return nil
}

// SameRepository returns ErrTagsRepository unless every tag is in the
// first one's repository: the children of one publish are made present
// in one repository.
func SameRepository(tags []name.Tag) error {
	if len(tags) == 0 {
		return nil
	}
	for _, t := range tags[1:] {
		if t.Context() != tags[0].Context() {
			return fmt.Errorf("%w: %s and %s", ErrTagsRepository, tags[0], t)
		}
	}
	return nil
}

// TagsError is PublishTags' report of a refusal after the first tag: which
// tags point at the new digest, which one failed and why, and which were
// not written.
type TagsError struct {
	Tagged    []name.Tag
	Failed    name.Tag
	Untouched []name.Tag
	Digest    v1.Hash
	Err       error
}

func (e *TagsError) Error() string {
	var b strings.Builder
	for _, t := range e.Tagged {
		fmt.Fprintf(&b, "%s: tagged %s; ", t, e.Digest)
	}
	fmt.Fprintf(&b, "%s: %v", e.Failed, e.Err)
	for _, t := range e.Untouched {
		fmt.Fprintf(&b, "; %s: not written", t)
	}
	return b.String()
}

// Unwrap returns the failed tag's error.
func (e *TagsError) Unwrap() error { return e.Err }
