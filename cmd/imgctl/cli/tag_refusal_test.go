package cli

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
)

// flagInMessage finds the flags a message tells the user to pass.
var flagInMessage = regexp.MustCompile(`(?:^|[\s("'])--([a-z][a-z0-9-]*)`)

// TestTagRefusalsNameExistingFlags runs the tag refusal of every verb that
// publishes (index create, index remove, rebase, build's tag check, which
// refuses before any builder is contacted, and promote), and a registry's
// own immutability refusal: each exits 2 with registry.ErrTagExists, and
// every --flag its message names exists on that command (rebase and
// promote have no --force, so theirs name none).
func TestTagRefusalsNameExistingFlags(t *testing.T) {
	relFastRetries(t)
	reg := regtest.New(t)
	srcs := relFixture(t, reg)
	app := rebaseFixture(t, reg)
	moveBases(t, reg, winFeb)
	sv, pub := sigKey(t)
	signed, _ := sigPush(t, reg, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t), sv)
	taken := reg.Host() + "/taken/app:1"
	if _, errOut, code := run(t, append([]string{"index", "create", "--no-verify", "-t", taken}, srcs[1])...); code != 0 {
		t.Fatalf("taking the tag: exit %d %s", code, errOut)
	}
	ctxDir := scratchContext(t)
	immutable := regtest.NewFaults(regtest.Fault{Kind: regtest.FaultAnswer, Route: regtest.RouteManifestByTag, Method: http.MethodPut,
		Repo: "harbor/app", Status: http.StatusPreconditionFailed,
		Body: `{"errors":[{"code":"PRECONDITION","message":"Failed to process request due to 'app:1' configured as immutable."}]}`})
	for _, tc := range []struct {
		name      string
		args      []string
		mw        func(http.Handler) http.Handler
		wantFlags []string // flags the message must name
	}{
		{"index create", append([]string{"index", "create", "-t", taken}, srcs[0]), nil, []string{"force"}},
		{"index remove", []string{"index", "remove", "-t", taken, "--platform", "linux/arm64", reg.Host() + "/" + relAppRef}, nil, []string{"force"}},
		{"rebase", []string{"rebase", app, "-t", taken}, nil, nil},
		{"build", []string{"build", "--builder", "unix:///nonexistent/buildkitd.sock", "--platform", "linux/amd64", "-t", taken, ctxDir}, nil, []string{"force"}},
		{"promote", []string{"promote", signed, taken, "--key", pub}, nil, nil},
		{"registry immutability", append([]string{"index", "create", "-t", reg.Host() + "/harbor/app:1"}, srcs[0]), immutable.Middleware, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg.SetMiddleware(tc.mw)
			defer reg.SetMiddleware(nil)
			_, errOut, code := run(t, tc.args...)
			if code != ExitError || !strings.Contains(errOut, registry.ErrTagExists.Error()) {
				t.Fatalf("exit %d, want 2 with %q:\n%s", code, registry.ErrTagExists, errOut)
			}
			cmd, _, err := NewRootCmd().Find(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			var named []string
			for _, m := range flagInMessage.FindAllStringSubmatch(errOut, -1) {
				named = append(named, m[1])
				if cmd.Flag(m[1]) == nil {
					t.Errorf("the refusal names --%s, which %q does not have:\n%s", m[1], cmd.CommandPath(), errOut)
				}
			}
			for _, f := range tc.wantFlags {
				if !strings.Contains(" "+strings.Join(named, " ")+" ", " "+f+" ") {
					t.Errorf("the refusal does not name --%s:\n%s", f, errOut)
				}
			}
		})
	}
}
