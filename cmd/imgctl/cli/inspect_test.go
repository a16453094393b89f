package cli

import (
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

func TestInspect(t *testing.T) {
	reg := regtest.New(t)
	idx := regtest.Must(regtest.MultiOSIndex())(t)
	ref := push(t, reg, "app:v1", idx)
	out, _, code := run(t, "inspect", ref)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{"PLATFORM", "OS.VERSION", "LTSC", "DIGEST", "SIZE", "linux/amd64", "linux/arm64",
		regtest.OSVersionLTSC2025 + "  ltsc2025", regtest.OSVersionLTSC2022 + "  ltsc2022", "attestation"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
	raw, _, code := run(t, "inspect", ref, "-o", "json")
	if code != 0 {
		t.Fatal(code)
	}
	want, err := idx.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(raw) != string(want) {
		t.Errorf("-o json is not the raw index:\n%s\nwant\n%s", raw, want)
	}
	lin := push(t, reg, "app:noplat", index(t, regtest.Entry{Image: regtest.Must(regtest.LinuxImage("amd64"))(t), NoPlatform: true}))
	out, _, _ = run(t, "inspect", lin)
	if !strings.Contains(out, "linux/amd64 (config)") {
		t.Errorf("entry without platform not read from config:\n%s", out)
	}
	if _, errOut, code := run(t, "inspect", reg.Host()+"/nope:x"); code != 2 || errOut == "" {
		t.Errorf("missing ref: exit %d %q", code, errOut)
	}
}
