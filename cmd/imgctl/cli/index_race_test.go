package cli

import (
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
)

// TestIndexCreateTagChangedConcurrently: another publisher tags the same
// tag right after imgctl's PUT; the read-back sees it and index create
// exits 2 with registry.ErrTagChanged instead of reporting a tag it lost.
func TestIndexCreateTagChangedConcurrently(t *testing.T) {
	reg := regtest.New(t)
	srcs := indexFixture(t, reg)
	other := index(t, regtest.Entry{Image: regtest.Must(regtest.LinuxImage("amd64", regtest.WithSeed("other")))(t)})
	push(t, reg, "merged/app:other", other)
	race := &regtest.TagRace{Repo: "merged/app", Tag: "1", MediaType: string(regtest.Must(other.MediaType())(t)),
		Manifest: regtest.Must(other.RawManifest())(t)}
	reg.SetMiddleware(race.Middleware)
	out, errOut, code := run(t, append([]string{"index", "create", "-t", reg.Host() + "/merged/app:1"}, srcs...)...)
	if code != ExitError || !race.Raced() || !strings.Contains(errOut, registry.ErrTagChanged.Error()) || out != "" {
		t.Fatalf("exit %d (raced %t), want 2 with %q\nstdout %q\nstderr %s", code, race.Raced(), registry.ErrTagChanged, out, errOut)
	}
}
