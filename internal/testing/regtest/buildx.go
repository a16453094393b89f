package regtest

import (
	"bytes"
	"context"
	"testing"

	"github.com/docker/buildx/util/imagetools"
	"github.com/docker/buildx/util/resolver"
	clitypes "github.com/docker/cli/cli/config/types"
	"github.com/moby/buildkit/session/auth/authprovider"
)

// BuildxInspect runs what `docker buildx imagetools inspect REF --format
// FORMAT` runs (imagetools.NewPrinter and Print, buildx v0.38.2) against a
// test registry at host, over plain HTTP and without credentials, and
// returns its output. Its templates turn a loader error into an empty
// result: assert what the output holds, not that there was no error.
func BuildxInspect(t testing.TB, host, ref, format string) []byte {
	t.Helper()
	plain := true
	opt := imagetools.Opt{
		Auth: func(context.Context, string, []string, authprovider.ExpireCachedAuthCheck) (clitypes.AuthConfig, error) {
			return clitypes.AuthConfig{}, nil
		},
		RegistryConfig: map[string]resolver.RegistryConfig{host: {PlainHTTP: &plain}},
	}
	p, err := imagetools.NewPrinter(context.Background(), opt, ref, format)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := p.Print(false, &out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
