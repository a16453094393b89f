package disttest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// Login writes the registry's credentials into a Docker config in a new
// temporary directory and points DOCKER_CONFIG at it for the rest of the
// test, keeping the auths of the config DOCKER_CONFIG named before (so
// that a test can log in to two registries). It sets the environment, so
// the test must not be parallel.
func (r *Registry) Login(t testing.TB) {
	t.Helper()
	SetDockerConfig(t, r.Host(), r.user, r.password)
}

// SetDockerConfig adds basic credentials for host to a copy of the current
// DOCKER_CONFIG's auths, in a new temporary directory, and points
// DOCKER_CONFIG at it for the rest of the test. Tests give a wrong
// password this way.
func SetDockerConfig(t testing.TB, host, user, password string) {
	t.Helper()
	auths := map[string]any{}
	if dir := os.Getenv("DOCKER_CONFIG"); dir != "" {
		if dt, err := os.ReadFile(filepath.Join(dir, "config.json")); err == nil {
			var cfg struct {
				Auths map[string]any `json:"auths"`
			}
			if err := json.Unmarshal(dt, &cfg); err != nil {
				t.Fatalf("reading %s/config.json: %v", dir, err)
			}
			for k, v := range cfg.Auths {
				auths[k] = v
			}
		}
	}
	auths[host] = map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + password))}
	dir := t.TempDir()
	dt, err := json.Marshal(map[string]any{"auths": auths})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), dt, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
}

// Auth returns the registry's credentials for go-containerregistry.
func (r *Registry) Auth() authn.Authenticator {
	return &authn.Basic{Username: r.user, Password: r.password}
}

// Remote returns go-containerregistry options that authenticate to the
// registry, for tests that read or write it behind imgctl's back.
func (r *Registry) Remote() []remote.Option {
	return []remote.Option{remote.WithAuth(r.Auth())}
}

// Ref parses s ("repo:tag" or "repo@sha256:...") as a reference on this
// registry.
func (r *Registry) Ref(s string) (name.Reference, error) {
	ref, err := name.ParseReference(r.Host()+"/"+s, name.Insecure)
	if err != nil {
		return nil, fmt.Errorf("parsing reference %q: %w", s, err)
	}
	return ref, nil
}

// PushTag parses "repo:tag" on this registry, pushes a v1.Image or
// v1.ImageIndex there with the registry's credentials, and returns the
// reference and the digest.
func (r *Registry) PushTag(s string, x any, opts ...remote.Option) (name.Reference, v1.Hash, error) {
	ref, err := r.Ref(s)
	if err != nil {
		return nil, v1.Hash{}, err
	}
	d, err := regtest.Push(ref, x, append(r.Remote(), opts...)...)
	return ref, d, err
}

// Head returns the descriptor ref (on this registry) points to, read with
// the registry's credentials.
func (r *Registry) Head(ref name.Reference) (*v1.Descriptor, error) {
	return remote.Head(ref, r.Remote()...)
}
