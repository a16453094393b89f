package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/sign"
)

// TestPromoteCompletesCopiedTag: after a plain `crane copy` of the index
// (the tag, no signatures), `promote SRC DST --key` copies the signatures
// to DST and verifies them there, so that `verify DST --key` passes; a
// second promote copies nothing.
func TestPromoteCompletesCopiedTag(t *testing.T) {
	t.Parallel()
	reg, prod := regtest.New(t), regtest.New(t)
	sv, pub := sigKey(t)
	signed, d := sigPush(t, reg, "ci/app:1", regtest.Must(regtest.MultiOSIndex())(t), sv)
	dst := prod.Host() + "/release/app:1.0"
	regtest.MustPush(t, prod.MustRef(t, "release/app:1.0"), regtest.Must(remote.Index(reg.MustRef(t, "ci/app@"+d)))(t))
	if out, _, code := run(t, "verify", dst, "--key", pub, "-o", "json"); code != 1 || decodeReport(t, out).severity(sign.RuleUnsigned) != "error" {
		t.Fatalf("the crane-copied tag: exit %d, want 1 (unsigned)\n%s", code, out)
	}
	out, errOut, code := run(t, "promote", signed, dst, "--key", pub)
	if code != 0 || !strings.Contains(out, "already points at "+d) || !strings.Contains(out, "copied 9 signature tags") {
		t.Fatalf("promote onto the copied tag: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := run(t, "verify", dst, "--key", pub); code != 0 {
		t.Fatalf("verify --key on the destination: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = run(t, "promote", signed, dst, "--key", pub, "-o", "json")
	var res struct {
		Pushed     bool
		Signatures map[string]int
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || res.Pushed || res.Signatures["tags"] != 0 {
		t.Fatalf("second promote: exit %d %v\n%s", code, err, out)
	}
}
