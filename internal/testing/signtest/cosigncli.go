package signtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/buildtest"
)

// CosignCLIs are the cosign CLI major versions the tests run, as `make
// cosign` builds them into bin/cosign-<major> from internal/tools/cosign.
var CosignCLIs = []string{"v2", "v3"}

// CosignCLI is a real cosign binary.
type CosignCLI struct {
	// Major is "v2" or "v3"; Path the binary.
	Major, Path string
}

// Cosign returns the cosign CLI of major version major: $IMGCTL_COSIGN_V2
// (or _V3) when set, else bin/cosign-<major> in the module root. A
// missing binary fails the test, naming the make target that builds it;
// under -short the test is skipped (buildtest.SkipShort).
func Cosign(t testing.TB, major string) CosignCLI {
	t.Helper()
	buildtest.SkipShort(t, "the cosign CLIs (bin/cosign-v2 and bin/cosign-v3, `make cosign`)")
	p, err := buildtest.BinTool("cosign-"+major, "IMGCTL_COSIGN_"+strings.ToUpper(major), "cosign")
	if err != nil {
		t.Fatal(err)
	}
	return CosignCLI{Major: major, Path: p}
}

// Run runs cosign with args offline, the way an air-gapped site runs it:
// every connection but to loopback registries goes to a proxy that
// refuses it (no TUF, Rekor or Fulcio), with a fresh TUF cache and home.
// env adds variables (DOCKER_CONFIG, COSIGN_PASSWORD). It returns the
// combined output and the exit error.
func (c CosignCLI) Run(t testing.TB, env []string, args ...string) (string, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.CommandContext(t.Context(), c.Path, args...)
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TUF_ROOT=" + filepath.Join(home, "tuf"),
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9",
		"NO_PROXY=127.0.0.1,localhost",
	}, env...)
	if dc := os.Getenv("DOCKER_CONFIG"); dc != "" {
		cmd.Env = append(cmd.Env, "DOCKER_CONFIG="+dc)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// VerifyOffline runs the usual offline check of a key-pair signature,
// `cosign verify --key PUB --insecure-ignore-tlog=true REF`, plus
// --allow-http-registry for the tests' plain-HTTP registries.
func (c CosignCLI) VerifyOffline(t testing.TB, pub, ref string, env ...string) (string, error) {
	t.Helper()
	out, err := c.Run(t, env, "verify", "--key", pub, "--insecure-ignore-tlog=true", "--allow-http-registry", ref)
	if err != nil {
		return out, fmt.Errorf("cosign %s verify --key %s --insecure-ignore-tlog=true %s: %w\n%s", c.Major, filepath.Base(pub), ref, err, out)
	}
	return out, nil
}
