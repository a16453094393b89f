package release

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/partial"

	"github.com/imgctl/imgctl/cmd/imgctl/cli"
	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestNotesFromImgctl writes release notes from what imgctl inspect -o json
// and verify -o json print for an index in the in-process registry:
// Linux amd64 and arm64, Windows ltsc2025 and ltsc2022, and an
// attestation manifest, which the table leaves out.
func TestNotesFromImgctl(t *testing.T) {
	t.Parallel()
	reg := regtest.New(t)
	linux := regtest.Must(regtest.LinuxImage("amd64"))(t)
	arm := regtest.Must(regtest.LinuxImage("arm64"))(t)
	win25 := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025))(t)
	win22 := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2022))(t)
	att := regtest.Must(regtest.AttestationEntry(linux))(t)
	idx := regtest.Must(regtest.Index(regtest.Entry{Image: linux}, regtest.Entry{Image: arm},
		regtest.Entry{Image: win25}, regtest.Entry{Image: win22}, att))(t)
	ref := reg.MustRef(t, "imgctl/imgctl:v1.2.0")
	digest := regtest.MustPush(t, ref, idx)
	image := ref.String() + "@" + digest.String()

	index := imgctl(t, "inspect", image, "-o", "json")
	report := imgctl(t, "verify", image, "--windows", windowsReleases, "--require-platform", linuxPlatforms, "-o", "json")
	n := Notes{Version: "v1.2.0", Image: image, Index: index, Verify: report, Signed: true,
		Archives: []string{ArchiveName("v1.2.0", Target{"linux", "amd64"}), ArchiveName("v1.2.0", Target{"windows", "amd64"})}}
	rows, err := n.Rows()
	if err != nil {
		t.Fatal(err)
	}
	d := func(img partial.WithRawManifest) string { return regtest.Must(partial.Digest(img))(t).String() }
	want := []PlatformRow{
		{Platform: "linux/amd64", Digest: d(linux)},
		{Platform: "linux/arm64/v8", Digest: d(arm)},
		{Platform: "windows/amd64", OSVersion: regtest.OSVersionLTSC2025, Digest: d(win25), Selected: []string{"ltsc2025"}},
		{Platform: "windows/amd64", OSVersion: regtest.OSVersionLTSC2022, Digest: d(win22), Selected: []string{"ltsc2022"}},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows = %+v, want %+v", rows, want)
	}
	for i := range want {
		if got := rows[i]; got.Platform != want[i].Platform || got.OSVersion != want[i].OSVersion || got.Digest != want[i].Digest ||
			strings.Join(got.Selected, ",") != strings.Join(want[i].Selected, ",") {
			t.Errorf("row %d = %+v, want %+v", i, got, want[i])
		}
	}

	var b bytes.Buffer
	if err := n.Write(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, w := range []string{
		"# imgctl v1.2.0\n",
		"`" + image + "`",
		"| platform | os.version | digest | LTSC selected |\n| --- | --- | --- | --- |\n",
		"| linux/amd64 |  | `" + d(linux) + "` |  |\n",
		"| windows/amd64 | " + regtest.OSVersionLTSC2025 + " | `" + d(win25) + "` | ltsc2025 |\n",
		"| windows/amd64 | " + regtest.OSVersionLTSC2022 + " | `" + d(win22) + "` | ltsc2022 |\n",
		"--key cosign.pub",
		"- `imgctl_1.2.0_windows_amd64.zip`\n",
		"sha256sum -c checksums.txt",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("notes lack %q:\n%s", w, md)
		}
	}
	if strings.Contains(md, "unknown/unknown") {
		t.Errorf("notes list the attestation manifest:\n%s", md)
	}
	// The check the notes show requires the image's Linux platforms: a
	// release's by default, the dry run's when it has fewer.
	for linux, want := range map[string]string{"": "linux/amd64,linux/arm64", "linux/amd64": "linux/amd64"} {
		n.Linux = nil
		if linux != "" {
			n.Linux = strings.Split(linux, ",")
		}
		b.Reset()
		if err := n.Write(&b); err != nil {
			t.Fatal(err)
		}
		if w := "imgctl verify " + image + " --windows ltsc2022,ltsc2025 --require-platform " + want + " --key cosign.pub\n"; !strings.Contains(b.String(), w) {
			t.Errorf("Linux %q: notes lack %q:\n%s", linux, w, b.String())
		}
	}
}

// TestNotesBadInput: notes are made from imgctl's JSON only.
func TestNotesBadInput(t *testing.T) {
	t.Parallel()
	if _, err := (Notes{Index: []byte("not json"), Verify: []byte("{}")}).Rows(); err == nil {
		t.Error("Rows read an index that is not JSON")
	}
	if _, err := (Notes{Index: []byte(`{"schemaVersion":2,"manifests":[]}`), Verify: []byte("[")}).Rows(); err == nil {
		t.Error("Rows read a verify report that is not JSON")
	}
}

// imgctl runs imgctl in process and returns its stdout; verify's exit 1
// (findings) still prints the report.
func imgctl(t *testing.T, args ...string) []byte {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := cli.Execute(t.Context(), args, strings.NewReader(""), &out, &errOut); code != cli.ExitOK && code != cli.ExitFailed {
		t.Fatalf("imgctl %s: exit %d\n%s", strings.Join(args, " "), code, errOut.String())
	}
	return out.Bytes()
}
