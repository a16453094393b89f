package registry

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestRegistryImmutabilityRefusals serves the answers Harbor, ECR and ACR
// give to a manifest PUT on a tag they hold immutable (see immutableRules
// for where each comes from) and checks that every tag write maps them to
// ErrTagExists, once, without a retry; and that the 400s, 405s and 412s
// that mean something else do not map.
func TestRegistryImmutabilityRefusals(t *testing.T) {
	ctx := context.Background()
	reg := regtest.New(t)
	repo := regtest.Must(reg.Repo("app"))(t)
	m, _ := pushedIndex(t, repo, "immutable")
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   bool
	}{
		{"ECR repository IMMUTABLE", 400, `{"errors":[{"code":"TAG_INVALID","message":"The image tag '1' already exists in the 'app' repository and cannot be overwritten because the repository is immutable."}]}`, true},
		{"ECR tag immutable", 400, `{"errors":[{"code":"TAG_INVALID","message":"The image tag '1' already exists in the 'app' repository and cannot be overwritten because the tag is immutable."}]}`, true},
		{"Harbor immutability rule", 412, `{"errors":[{"code":"PRECONDITION","message":"Failed to process request due to 'app:1' configured as immutable."}]}`, true},
		{"Harbor 1.10", 412, `{"errors":[{"code":"PRECONDITION","message":"Failed to process request, due to 'app:1' is a immutable tag."}]}`, true},
		{"ACR locked image", 405, `{"errors":[{"code":"REGISTRY_DISALLOWED_OPERATION","message":"The operation is disallowed on this registry, repository or image. View troubleshooting steps at https://aka.ms/acr/faq/#why-does-my-pull-or-push-request-fail-with-disallowed-operation","detail":{}}]}`, true},
		{"ACR older", 405, `{"errors":[{"code":"UNKNOWN","message":"The operation is disallowed."}]}`, true},

		{"MANIFEST_INVALID", 400, `{"errors":[{"code":"MANIFEST_INVALID","message":"manifest invalid","detail":{}}]}`, false},
		{"BLOB_UNKNOWN", 400, `{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown to registry","detail":"sha256:4a5b"}]}`, false},
		{"MANIFEST_BLOB_UNKNOWN", 400, `{"errors":[{"code":"MANIFEST_BLOB_UNKNOWN","message":"blob unknown to registry"}]}`, false},
		{"malformed tag", 400, `{"errors":[{"code":"TAG_INVALID","message":"manifest tag did not match URI"}]}`, false},
		{"immutable, but another code", 400, `{"errors":[{"code":"MANIFEST_INVALID","message":"manifest invalid: immutable field changed"}]}`, false},
		{"Harbor replication precondition", 412, `{"errors":[{"code":"PRECONDITION","message":"the same name but different digest artifact exists, but the override is set to false"}]}`, false},
		{"access denied", 403, `{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}`, false},
		{"HTML 400 from a proxy", 400, `<html><body>immutable</body></html>`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := regtest.NewFaults(regtest.Fault{Kind: regtest.FaultAnswer, Route: regtest.RouteManifestByTag,
				Method: http.MethodPut, Status: tc.status, Body: tc.body})
			reg.SetMiddleware(f.Middleware)
			defer reg.SetMiddleware(nil)
			c := New(WithRetryBase(time.Millisecond))
			err := c.Copier(repo).Put(ctx, repo.Tag("1"), m)
			if err == nil {
				t.Fatal("the PUT was refused, but Put returned no error")
			}
			var ie *ImmutableTagError
			if got := errors.Is(err, ErrTagExists); got != tc.want || errors.As(err, &ie) != tc.want {
				t.Fatalf("ErrTagExists = %t, want %t: %v", got, tc.want, err)
			}
			if tc.want && f.Injected() != 1 {
				t.Errorf("an immutability refusal was sent %d times, want once (no retry)", f.Injected())
			}
		})
	}
}

// TestImmutabilityOnEveryTagWrite: Publish and the signature tags
// CopyArtifacts writes through go-containerregistry's Pusher map the
// refusal as Copier.Put does; a PUT by digest is not a tag write.
func TestImmutabilityOnEveryTagWrite(t *testing.T) {
	ctx := context.Background()
	reg := regtest.New(t)
	src := regtest.Must(reg.Repo("src"))(t)
	dst := regtest.Must(reg.Repo("dst"))(t)
	m, d := pushedIndex(t, src, "every-write")
	pushedIndex(t, dst, "every-write")
	regtest.MustPush(t, SignatureTag(src, d, "sig"), regtest.Must(regtest.LinuxImage("amd64", regtest.WithSeed("sig")))(t))
	harbor := `{"errors":[{"code":"PRECONDITION","message":"Failed to process request due to 'dst:x' configured as immutable."}]}`
	reg.SetMiddleware(regtest.NewFaults(regtest.Fault{Kind: regtest.FaultAnswer, Route: regtest.RouteManifestByTag,
		Method: http.MethodPut, Repo: "dst", Status: 412, Body: harbor}).Middleware)
	c := New(WithRetryBase(time.Millisecond))
	if err := c.Copier(dst).Put(ctx, dst.Digest(d.String()), m); err != nil {
		t.Errorf("a PUT by digest is not a tag write: %v", err)
	}
	if err := c.Publish(ctx, dst.Tag("1"), m, nil); !errors.Is(err, ErrTagExists) {
		t.Errorf("Publish: %v, want ErrTagExists", err)
	}
	if _, err := c.CopyArtifacts(ctx, src, dst, []v1.Hash{d}, ArtifactOptions{}); !errors.Is(err, ErrTagExists) {
		t.Errorf("CopyArtifacts: %v, want ErrTagExists", err)
	}
}
