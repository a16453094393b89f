package regtest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// ErrNotPushable is returned by Push for values that are neither a v1.Image
// nor a v1.ImageIndex.
var ErrNotPushable = errors.New("neither a v1.Image nor a v1.ImageIndex")

// Push writes a v1.Image or v1.ImageIndex to ref (on any registry) and returns
// its digest. Foreign (non-distributable) layers are not uploaded, as with any
// remote.Write.
func Push(ref name.Reference, x any, opts ...remote.Option) (v1.Hash, error) {
	var (
		d   v1.Hash
		err error
	)
	switch v := x.(type) {
	case v1.ImageIndex:
		if d, err = v.Digest(); err == nil {
			err = remote.WriteIndex(ref, v, opts...)
		}
	case v1.Image:
		if d, err = v.Digest(); err == nil {
			err = remote.Write(ref, v, opts...)
		}
	default:
		return v1.Hash{}, fmt.Errorf("pushing %T to %s: %w", x, ref, ErrNotPushable)
	}
	if err != nil {
		return v1.Hash{}, fmt.Errorf("pushing %s: %w", ref, err)
	}
	return d, nil
}

// MustPush is Push that fails the test on error.
func MustPush(t testing.TB, ref name.Reference, x any, opts ...remote.Option) v1.Hash {
	t.Helper()
	d, err := Push(ref, x, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Push is the package-level Push; ref may name any registry.
func (r *Registry) Push(ref name.Reference, x any, opts ...remote.Option) (v1.Hash, error) {
	return Push(ref, x, opts...)
}

// MustPush is the package-level MustPush; ref may name any registry.
func (r *Registry) MustPush(t testing.TB, ref name.Reference, x any, opts ...remote.Option) v1.Hash {
	t.Helper()
	return MustPush(t, ref, x, opts...)
}

// PushTag parses "repo:tag" on this registry, pushes x there and returns the
// reference and the digest.
func (r *Registry) PushTag(s string, x any, opts ...remote.Option) (name.Reference, v1.Hash, error) {
	ref, err := r.Ref(s)
	if err != nil {
		return nil, v1.Hash{}, err
	}
	d, err := Push(ref, x, opts...)
	return ref, d, err
}

// Must returns a function that returns v, or fails the test if err is not nil.
// It adapts the error-returning fixtures to tests:
//
//	img := regtest.Must(regtest.WindowsImage("10.0.26100.6584"))(t)
func Must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
