package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/partial"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

func TestResolve(t *testing.T) {
	reg := regtest.New(t)
	w25 := regtest.Must(regtest.WindowsImage("10.0.26100.2894"))(t)
	w22 := regtest.Must(regtest.WindowsImage("10.0.20348.3091"))(t)
	lin := regtest.Must(regtest.LinuxImage("amd64"))(t)
	d25 := digestOf(t, w25)
	d22 := digestOf(t, w22)
	dl := digestOf(t, lin)
	ref := push(t, reg, "app:v1", index(t, regtest.Entry{Image: lin}, regtest.Entry{Image: w25}, regtest.Entry{Image: w22}))
	noPlat := push(t, reg, "app:noplat", index(t, regtest.Entry{Image: lin}, regtest.Entry{Image: w25, NoPlatform: true}))
	single := push(t, reg, "app:single", w25)
	// Issue 24's examples: an index that lists the older build first, and
	// one with only ltsc2022.
	oldest := push(t, reg, "app:oldest", index(t, regtest.Entry{Image: lin}, regtest.Entry{Image: w22}, regtest.Entry{Image: w25}))
	only22 := push(t, reg, "app:only22", index(t, regtest.Entry{Image: lin}, regtest.Entry{Image: w22}))
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{ref, "--platform", "windows/amd64:10.0.26100.2894"}, d25, 0},
		{[]string{ref, "--platform", "windows(10.0.20348)/amd64"}, d22, 0},
		{[]string{ref, "--platform", "windows/amd64:10.0.26100", "--engine", "containerd@1.7.30"}, d25, 0},
		{[]string{ref, "--platform", "windows/amd64:10.0.26100", "--engine", "containerd-1.7"}, d25, 0}, // deprecated alias
		{[]string{oldest, "--platform", "windows/amd64:10.0.26100", "--engine", "containerd@2.0.4+azure"}, d22, 0},
		{[]string{oldest, "--platform", "windows/amd64:10.0.26100", "--engine", "containerd@1.7.30"}, d22, 0},
		{[]string{oldest, "--platform", "windows/amd64:10.0.26100", "--engine", "containerd@2.1.6"}, d25, 0},
		{[]string{oldest, "--platform", "windows/amd64:10.0.26100"}, d25, 0},
		{[]string{only22, "--platform", "windows/amd64:10.0.26200", "--engine", "containerd@2.2.7"}, "", 1},
		{[]string{only22, "--platform", "windows/amd64:10.0.26200", "--engine", "containerd@2.3.4"}, "", 1},
		{[]string{only22, "--platform", "windows/amd64:10.0.26200", "--engine", "containerd@2.4.0"}, d22, 0},
		{[]string{only22, "--platform", "windows/amd64:10.0.26200", "--engine", "docker@29.7+containerd-store"}, "", 1},
		{[]string{ref, "--platform", "windows/amd64:10.0.26100", "--engine", "containerd@garbage"}, "", 2},
		{[]string{ref, "--platform", "windows/amd64:10.0.26100", "--engine", "containerd@0.1"}, "", 2},
		{[]string{ref, "--platform", "windows/amd64:10.0.26100", "--engine", "docker@"}, "", 2},
		{[]string{ref, "--platform", "windows/amd64:10.0.26200", "--engine", "docker"}, d25, 0},
		{[]string{ref, "--platform", "linux/amd64"}, dl, 0},
		{[]string{ref, "--platform", "windows/amd64:10.0.17763"}, "", 1},
		{[]string{ref, "--platform", "linux/arm64"}, "", 1},
		{[]string{noPlat, "--platform", "windows/amd64:10.0.26100"}, d25, 0},
		{[]string{noPlat, "--platform", "windows/amd64:10.0.20348"}, "", 1},
		{[]string{noPlat, "--platform", "windows/amd64:10.0.26100", "--engine", "docker"}, "", 1},
		{[]string{single, "--platform", "windows/amd64:10.0.26100"}, d25, 0},
		{[]string{single, "--platform", "windows/amd64:10.0.20348"}, "", 1},
		{[]string{ref, "--platform", "windows"}, "", 2},
		{[]string{ref, "--platform", "windows/amd64", "--engine", "podman"}, "", 2},
		{[]string{ref}, "", 2},
	} {
		out, errOut, code := run(t, append([]string{"resolve"}, c.args...)...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d: %s%s", c.args, code, c.code, out, errOut)
			continue
		}
		if strings.TrimSpace(out) != c.want {
			t.Errorf("%v: got %q, want %q", c.args, out, c.want)
		}
		if want := engineStderr[c.args[len(c.args)-1]]; !strings.Contains(errOut, want) {
			t.Errorf("%v: stderr %q lacks %q", c.args, errOut, want)
		}
		if code != 0 && !strings.Contains(errOut, "imgctl: ") {
			t.Errorf("%v: no message on stderr", c.args)
		}
	}
}

// engineStderr is what stderr must say for an --engine value: a warning
// for the deprecated name, the supported ranges for a release without one.
var engineStderr = map[string]string{
	"containerd-1.7":     "warning: engine \"containerd-1.7\" is deprecated",
	"containerd@garbage": "supported: containerd 1.7.19–1.7.x",
	"containerd@0.1":     "containerd 0.1 has no profile; supported:",
	"docker@":            "names no version; supported:",
}

func TestResolveJSON(t *testing.T) {
	reg := regtest.New(t)
	w25 := regtest.Must(regtest.WindowsImage("10.0.26100.2894"))(t)
	ref := push(t, reg, "app:v1", index(t, regtest.Entry{Image: w25}))
	out, _, code := run(t, "resolve", ref, "--platform", "windows/amd64:10.0.26100.2894", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var got struct {
		Digest   string
		Platform struct {
			OS           string `json:"os"`
			Architecture string `json:"architecture"`
			OSVersion    string `json:"os.version"`
		}
		Engine string
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	d, err := partial.Descriptor(w25)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != d.Digest.String() || got.Engine != "containerd" || got.Platform.OSVersion != "10.0.26100.2894" || got.Platform.OS != "windows" {
		t.Errorf("got %+v", got)
	}
}
