package cli

import (
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/verify"
)

// TestVerifyRules gives every rule a case that reports it and a case that
// does not, each run through a fresh root command against the in-process
// registry.
func TestVerifyRules(t *testing.T) {
	reg := regtest.New(t)
	w25 := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025))(t)
	w22 := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2022))(t)
	lin := regtest.Must(regtest.LinuxImage("amd64"))(t)
	arm := regtest.Must(regtest.LinuxImage("arm64"))(t)
	good := regtest.Must(regtest.MultiOSIndex())(t)
	// Issue 24's examples: the older build listed first, and only ltsc2022.
	oldestFirst := index(t, regtest.Entry{Image: w22}, regtest.Entry{Image: w25})
	only22 := index(t, regtest.Entry{Image: lin}, regtest.Entry{Image: w22})
	hp := regtest.Must(regtest.HostProcessImage())(t)
	attW25 := attEntry(t, w25)

	t25 := []string{"--windows", "ltsc2025"}
	type tc struct {
		name string
		x    any // v1.Image or v1.ImageIndex
		args []string
		rule string
		sev  string // "" = the rule must not be reported
		code int
	}
	cases := []tc{
		{"good index passes", good, nil, "", "", 0},

		{"missing os.version", index(t, regtest.Entry{Image: lin}, regtest.Entry{Image: w25, OmitOSVersion: true}), nil, verify.RuleMissingOSVersion, "error", 1},
		{"os.version present", index(t, regtest.Entry{Image: lin}, regtest.Entry{Image: w25}), t25, verify.RuleMissingOSVersion, "", 0},
		{"hostprocess without os.version", index(t, regtest.Entry{Image: hp}), []string{"--hostprocess"}, verify.RuleMissingOSVersion, "", 0},
		{"hostprocess image without the flag", index(t, regtest.Entry{Image: hp}), nil, verify.RuleMissingOSVersion, "error", 1},

		{"malformed os.version", index(t, regtest.Entry{Image: w25, Platform: winP("10.0.26100")}), nil, verify.RuleMalformedOSVersion, "error", 1},
		{"well-formed os.version", index(t, regtest.Entry{Image: w25}), t25, verify.RuleMalformedOSVersion, "", 0},

		{"descriptor and config disagree", index(t, regtest.Entry{Image: w25, Platform: winP("10.0.26100.1")}), nil, verify.RuleOSVersionMismatch, "error", 1},
		{"descriptor and config agree", index(t, regtest.Entry{Image: w25}), t25, verify.RuleOSVersionMismatch, "", 0},

		{"os/arch disagree", index(t, regtest.Entry{Image: lin, Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}), nil, verify.RulePlatformMismatch, "error", 1},
		{"os/arch agree", index(t, regtest.Entry{Image: lin}, regtest.Entry{Image: arm}), nil, verify.RulePlatformMismatch, "", 0},

		{"only 2025 for ltsc2022", index(t, regtest.Entry{Image: w25}), []string{"--windows", "ltsc2022"}, verify.RuleNoVariantForTarget, "error", 1},
		{"2025 for ltsc2025", index(t, regtest.Entry{Image: w25}), []string{"--windows", "ltsc2025"}, verify.RuleNoVariantForTarget, "", 0},
		{"linux only with a windows target", index(t, regtest.Entry{Image: lin}), []string{"--windows", "20348"}, verify.RuleNoVariantForTarget, "error", 1},

		{"ltsc2019 variant nobody selects", index(t, regtest.Entry{Image: w25}, regtest.Entry{Image: w22}, regtest.Entry{Image: regtest.Must(regtest.WindowsImage("10.0.17763.6893"))(t)}), nil, verify.RuleUnreachableVariant, "warning", 0},
		{"every variant selected", index(t, regtest.Entry{Image: w25}, regtest.Entry{Image: w22}), nil, verify.RuleUnreachableVariant, "", 0},

		{"two 26100 variants", index(t, regtest.Entry{Image: w25}, regtest.Entry{Image: regtest.Must(regtest.WindowsImage("10.0.26100.1"))(t)}), nil, verify.RuleDuplicatePlatform, "error", 1},
		{"one per build", index(t, regtest.Entry{Image: w25}, regtest.Entry{Image: w22}), nil, verify.RuleDuplicatePlatform, "", 0},

		{"containerd 1.7 to 2.1.5 run the first entry, 20348, on a 2025 node", oldestFirst, []string{"--windows", "ltsc2025"}, verify.RuleEngineDisagreement, "warning", 0},
		{"index order runs the older build", oldestFirst, []string{"--windows", "ltsc2025"}, verify.RuleOrderPicksOlder, "warning", 0},
		{"newest first: every line runs 26100", index(t, regtest.Entry{Image: regtest.Must(regtest.WindowsImage("10.0.26100.2894"))(t)}, regtest.Entry{Image: regtest.Must(regtest.WindowsImage("10.0.20348.3091"))(t)}), []string{"--windows", "ltsc2025"}, verify.RuleOrderPicksOlder, "", 0},
		{"containerd 2.1.6 to 2.3 reject 20348 on a 26200 client", only22, []string{"--windows", "10.0.26200"}, verify.RuleNoVariantForTarget, "error", 1},
		{"containerd 2.4 runs 20348 on a 26200 client", only22, []string{"--windows", "10.0.26200", "--engine", "containerd@2.4.0"}, verify.RuleNoVariantForTarget, "", 0},
		{"engines agree", index(t, regtest.Entry{Image: w25}), []string{"--windows", "ltsc2025"}, verify.RuleEngineDisagreement, "", 0},
		{"only containerd simulated", index(t, regtest.Entry{Image: regtest.Must(regtest.WindowsImage("10.0.26100.2894"))(t)}, regtest.Entry{Image: regtest.Must(regtest.WindowsImage("10.0.20348.3091"))(t)}), []string{"--windows", "ltsc2025", "--engine", "containerd"}, verify.RuleEngineDisagreement, "", 0},

		{"string order picks 9999 over 33674", index(t, regtest.Entry{Image: regtest.Must(regtest.WindowsImage("10.0.26100.33674"))(t)}, regtest.Entry{Image: regtest.Must(regtest.WindowsImage("10.0.26100.9999"))(t)}), []string{"--windows", "ltsc2025"}, verify.RuleOrderingQuirk, "warning", 1},
		{"no quirk with one revision", index(t, regtest.Entry{Image: regtest.Must(regtest.WindowsImage("10.0.26100.33674"))(t)}), []string{"--windows", "ltsc2025"}, verify.RuleOrderingQuirk, "", 0},

		{"shell-form entrypoint", index(t, regtest.Entry{Image: regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025, regtest.WithEntrypoint([]string{"/bin/sh", "-c", `["C:\app\hello.exe"]`})))(t)}), nil, verify.RuleShellFormEntrypoint, "error", 1},
		{"exec-form entrypoint", index(t, regtest.Entry{Image: w25}), t25, verify.RuleShellFormEntrypoint, "", 0},

		{"ContainerAdministrator warns", index(t, regtest.Entry{Image: regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025, regtest.WithUser("ContainerAdministrator")))(t)}), []string{"--windows", "ltsc2025"}, verify.RuleContainerAdministrator, "warning", 0},
		{"ContainerAdministrator under --run-as-non-root", index(t, regtest.Entry{Image: regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025, regtest.WithUser("ContainerAdministrator")))(t)}), []string{"--windows", "ltsc2025", "--run-as-non-root"}, verify.RuleContainerAdministrator, "error", 1},
		{"ContainerUser under --run-as-non-root", index(t, regtest.Entry{Image: w25}), []string{"--windows", "ltsc2025", "--run-as-non-root"}, verify.RuleContainerAdministrator, "", 0},

		{"foreign layers", index(t, regtest.Entry{Image: regtest.Must(regtest.ForeignLayerImage("10.0.17763.6893"))(t)}), []string{"--windows", "ltsc2019"}, verify.RuleForeignLayers, "warning", 0},
		{"no foreign layers", index(t, regtest.Entry{Image: w25}), t25, verify.RuleForeignLayers, "", 0},

		{"required arm64 missing", index(t, regtest.Entry{Image: lin}), []string{"--require-platform", "linux/amd64,linux/arm64"}, verify.RuleMissingPlatform, "error", 1},
		{"required platforms present", good, []string{"--require-platform", "linux/amd64,linux/arm64/v8,windows/amd64:10.0.20348"}, verify.RuleMissingPlatform, "", 0},
		{"required build missing", good, []string{"--require-platform", "windows/amd64:10.0.17763"}, verify.RuleMissingPlatform, "error", 1},

		{"attestation without its subject", index(t, regtest.Entry{Image: w22}, attW25), nil, verify.RuleDanglingAttestation, "warning", 0},
		{"attestation with its subject", index(t, regtest.Entry{Image: w25}, attW25), []string{"--windows", "ltsc2025"}, verify.RuleDanglingAttestation, "", 0},

		{"single linux manifest", lin, nil, verify.RuleNotAnIndex, "warning", 0},
		{"single windows manifest", w25, nil, verify.RuleNotAnIndex, "error", 1},
		{"single hostprocess manifest", hp, []string{"--hostprocess"}, verify.RuleNotAnIndex, "warning", 0},

		{"entry without platform", index(t, regtest.Entry{Image: lin, NoPlatform: true}), nil, verify.RuleNoDescriptorPlatform, "warning", 0},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref := push(t, reg, "rules:"+strings.Repeat("x", 0)+itoa(i), c.x)
			out, errOut, code := run(t, append([]string{"verify", ref, "-o", "json"}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstderr: %s\n%s", code, c.code, errOut, out)
			}
			r := decodeReport(t, out)
			if *r.Passed != (c.code == 0) {
				t.Errorf("passed=%v with exit %d", *r.Passed, code)
			}
			if c.rule != "" {
				if got := r.severity(c.rule); got != c.sev {
					t.Errorf("rule %s: severity %q, want %q\n%s", c.rule, got, c.sev, out)
				}
			}
			if c.rule == "" && len(r.Findings) != 0 {
				t.Errorf("want no findings, got %s", out)
			}
		})
	}
}

func itoa(i int) string { return string(rune('a'+i/26)) + string(rune('a'+i%26)) }

// TestVerifyTargets checks the per-target selections in the JSON report.
func TestVerifyTargets(t *testing.T) {
	reg := regtest.New(t)
	ref := push(t, reg, "app:good", regtest.Must(regtest.MultiOSIndex())(t))
	out, _, code := run(t, "verify", ref, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	r := decodeReport(t, out)
	if want := 2 * len(platform.Engines()); len(r.Targets) != want {
		t.Fatalf("want 2 targets x %d engines, got %d", len(platform.Engines()), len(r.Targets))
	}
	for _, tr := range r.Targets {
		want := map[string]string{"ltsc2022": regtest.OSVersionLTSC2022, "ltsc2025": regtest.OSVersionLTSC2025}[tr.Target]
		if tr.OSVersion != want || tr.Selected == "" {
			t.Errorf("%s/%s selected %s %s, want %s", tr.Target, tr.Engine, tr.Selected, tr.OSVersion, want)
		}
	}
}

// TestVerifyReadsNoLayer: verify reads the index, the manifests and the
// configs only, and reports its request count with --verbose.
func TestVerifyReadsNoLayer(t *testing.T) {
	reg := regtest.New(t)
	ref := push(t, reg, "app:good", regtest.Must(regtest.MultiOSIndex())(t))
	reg.ResetStats()
	_, errOut, code := run(t, "verify", ref, "--verbose")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	st := reg.Stats()
	// 4 images: 4 config blobs; attestations are not opened.
	if st.Blobs != 4 {
		t.Errorf("verify fetched %d blobs, want the 4 configs only (%s)", st.Blobs, st)
	}
	if !strings.Contains(errOut, "registry requests") {
		t.Errorf("--verbose does not report the request count: %s", errOut)
	}
}

func TestVerifyText(t *testing.T) {
	reg := regtest.New(t)
	ref := push(t, reg, "app:bad", index(t, regtest.Entry{Image: regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025))(t), OmitOSVersion: true}))
	out, _, code := run(t, "verify", ref)
	if code != 1 || !strings.Contains(out, "FAILED") || !strings.Contains(out, "missing-os-version") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

// TestVerifyErrors: usage, network and registry errors exit 2.
func TestVerifyErrors(t *testing.T) {
	reg := regtest.New(t)
	ref := push(t, reg, "app:good", regtest.Must(regtest.MultiOSIndex())(t))
	for _, c := range [][]string{
		{"verify"},
		{"verify", "UPPER/Case::bad"},
		{"verify", ref, "--windows", "ltsc2030"},
		{"verify", ref, "--require-platform", "linux"},
		{"verify", ref, "--engine", "cri-o"},
		{"verify", ref, "-o", "yaml"},
		{"verify", ref, "--no-such-flag"},
		{"verify", reg.Host() + "/app:missing"},
		{"verify", "127.0.0.1:1/app:x"},
		{"verify", "10.255.255.1:5000/app:x"},
	} {
		out, errOut, code := run(t, c...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s%s", c, code, out, errOut)
		}
		if !strings.HasPrefix(errOut, "imgctl: ") {
			t.Errorf("%v: no error message: %q", c, errOut)
		}
	}
}

// TestVerifyEngineFlag: --engine repeats and takes lists of releases; the
// same profile twice is a usage error.
func TestVerifyEngineFlag(t *testing.T) {
	reg := regtest.New(t)
	ref := push(t, reg, "app:good", regtest.Must(regtest.MultiOSIndex())(t))
	out, errOut, code := run(t, "verify", ref, "--windows", "ltsc2025", "--engine", "containerd@2.1.6,containerd@1.7.30", "--engine", "docker@29.7", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var engines []string
	for _, tr := range decodeReport(t, out).Targets {
		engines = append(engines, tr.Engine+" "+tr.Releases)
	}
	want := []string{"containerd-ltsc-floor containerd 2.1.6–2.2.x", "containerd-legacy containerd 1.7.19–1.7.x", "docker docker ≥ 25.0.0"}
	if !slices.Equal(engines, want) {
		t.Errorf("rows %q, want %q", engines, want)
	}
	_, errOut, code = run(t, "verify", ref, "--engine", "containerd@2.0.4", "--engine", "containerd@2.1.4+azure")
	if code != 2 || !strings.Contains(errOut, "same profile (containerd-index-order)") {
		t.Errorf("one profile twice: exit %d: %s", code, errOut)
	}
}
