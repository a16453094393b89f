package index

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
	"github.com/imgctl/imgctl/snapshot"
)

// testOptions retries after a millisecond so that fault tests fail fast.
func testOptions() Options {
	return Options{Registry: registry.New(registry.WithRetryBase(time.Millisecond))}
}

// pushed pushes x to repo:tag on reg and returns the reference.
func pushed(t *testing.T, reg *regtest.Registry, s string, x any) name.Reference {
	t.Helper()
	ref, _, err := reg.PushTag(s, x)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func tag(t *testing.T, reg *regtest.Registry, s string) name.Tag {
	t.Helper()
	return reg.MustRef(t, s).(name.Tag)
}

// fetchIndex reads a pushed index from the registry.
func fetchIndex(t *testing.T, ref name.Reference) (*v1.IndexManifest, v1.Hash) {
	t.Helper()
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return im, d
}

func tagExists(t *testing.T, ref name.Reference) bool {
	t.Helper()
	_, err := remote.Head(ref)
	if err != nil && !registry.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func digest(t *testing.T, x interface{ Digest() (v1.Hash, error) }) v1.Hash {
	t.Helper()
	d, err := x.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// platforms lists the index's platforms, attestations as "attestation".
func platforms(im *v1.IndexManifest) []string {
	var out []string
	for _, d := range im.Manifests {
		switch {
		case d.Annotations[snapshot.AnnotationReferenceType] == snapshot.AttestationManifest:
			out = append(out, "attestation")
		case d.Platform == nil:
			out = append(out, "-")
		default:
			s := d.Platform.OS + "/" + d.Platform.Architecture
			if d.Platform.Variant != "" {
				s += "/" + d.Platform.Variant
			}
			if d.Platform.OSVersion != "" {
				s += ":" + d.Platform.OSVersion
			}
			out = append(out, s)
		}
	}
	return out
}

// failing returns a middleware that answers 500 to GETs whose path ends in
// suffix.
func failing(suffix string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, suffix) {
				http.Error(w, "injected", http.StatusInternalServerError)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

var ctx = context.Background()

// fetchIndexErr reads an index and each of its image children.
func fetchIndexErr(ref name.Reference) (*v1.IndexManifest, error) {
	idx, err := remote.Index(ref)
	if err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range im.Manifests {
		if d.MediaType.IsImage() {
			img, err := idx.Image(d.Digest)
			if err == nil {
				_, err = img.ConfigFile()
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return im, nil
}
