package platform

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Platform
		out  string
	}{
		{"linux/amd64", Platform{OS: "linux", Architecture: "amd64"}, "linux/amd64"},
		{"linux/arm64/v8", Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}, "linux/arm64/v8"},
		{"windows/amd64:10.0.26100.2894", win("10.0.26100.2894"), "windows/amd64:10.0.26100.2894"},
		{"windows/amd64:10.0.20348", win("10.0.20348"), "windows/amd64:10.0.20348"},
		{"windows(10.0.20348)/amd64", win("10.0.20348"), "windows/amd64:10.0.20348"},
		{"windows(10.0.26100.1+win32k)/amd64", Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.1", OSFeatures: []string{"win32k"}}, "windows/amd64:10.0.26100.1"},
		{" Linux/AMD64 ", Platform{OS: "linux", Architecture: "amd64"}, "linux/amd64"},
	} {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
		if s := Format(got); s != tc.out {
			t.Errorf("Format(Parse(%q)) = %q, want %q", tc.in, s, tc.out)
		}
	}
}

func TestParseInvalid(t *testing.T) {
	for _, in := range []string{
		"", "linux", "windows", "windows(10.0.20348)", "/amd64", "linux/", "a/b/c/d",
		"linux/amd64:10.0.1.1", "windows/amd64:10.0", "windows/amd64:10.0.x.1",
		"windows/amd64:10.0.26100.1.2", "lin ux/amd64", "linux/amd64;rm", "linux/*",
		"windows(10.0.x)/amd64", "linux/amd64/v8\x00",
	} {
		if p, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %v, want error", in, p)
		} else if !errors.Is(err, ErrInvalidPlatform) {
			t.Errorf("Parse(%q): %v is not ErrInvalidPlatform", in, err)
		}
	}
}

func TestParseVersion(t *testing.T) {
	v, err := ParseVersion("10.0.26100.33674")
	if err != nil || v.Build != 26100 || v.Revision != 33674 || v.String() != "10.0.26100.33674" {
		t.Fatalf("got %+v, %v", v, err)
	}
	for _, bad := range []string{"", "10.0.26100", "10.0.26100.1.1", "10..26100.1", "a.b.c.d", "10.0.99999.1", "10.0.26100.-1", "10.0.26100.+1", "10.0.26100. 1"} {
		if _, err := ParseVersion(bad); !errors.Is(err, ErrMalformedVersion) {
			t.Errorf("ParseVersion(%q): %v, want ErrMalformedVersion", bad, err)
		}
	}
	if _, err := ParseHostVersion("10.0.20348"); err != nil {
		t.Errorf("ParseHostVersion: %v", err)
	}
	if a, b := mustV(t, "10.0.26100.9999"), mustV(t, "10.0.26100.33674"); a.Compare(b) >= 0 || b.Compare(a) <= 0 || a.Compare(a) != 0 {
		t.Errorf("Compare is not numeric")
	}
}

func mustV(t *testing.T, s string) Version {
	t.Helper()
	v, err := ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]string{
		"ltsc2019": "10.0.17763", "LTSC2022": "10.0.20348", "ltsc2025": "10.0.26100",
		"20348": "10.0.20348", "10.0.26100.2894": "10.0.26100.2894", "10.0.26200": "10.0.26200",
	} {
		tg, err := ParseTarget(in)
		if err != nil {
			t.Errorf("ParseTarget(%q): %v", in, err)
			continue
		}
		if got := tg.Host().OSVersion; got != want {
			t.Errorf("ParseTarget(%q) host %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"ltsc2030", "latest", "0", "99999999", "10.0", "10.0.x"} {
		if _, err := ParseTarget(bad); !errors.Is(err, ErrUnknownTarget) {
			t.Errorf("ParseTarget(%q): %v, want ErrUnknownTarget", bad, err)
		}
	}
	if ReleaseName("10.0.26100.1") != "ltsc2025" || ReleaseName("10.0.22621.1") != "" || ReleaseName("junk") != "" {
		t.Errorf("ReleaseName wrong")
	}
}

func TestEngineByName(t *testing.T) {
	for _, n := range EngineNames() {
		if e, err := EngineByName(n); err != nil || e.Name() != n {
			t.Errorf("EngineByName(%q) = %v, %v", n, e, err)
		}
	}
	if _, err := EngineByName("cri-o"); !errors.Is(err, ErrUnknownEngine) {
		t.Errorf("want ErrUnknownEngine, got %v", err)
	}
}

func TestParseEngines(t *testing.T) {
	es, dep, err := ParseEngines([]string{"containerd@2.0.4", Containerd17, "docker@29.7"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	if want := []string{ContainerdIndexOrder, ContainerdLegacy, "docker"}; !slices.Equal(names, want) {
		t.Errorf("ParseEngines = %v, want %v", names, want)
	}
	if len(dep) != 1 || !strings.Contains(dep[0], ContainerdLegacy) {
		t.Errorf("deprecated = %q, want one note naming %s", dep, ContainerdLegacy)
	}
	// One profile, two spellings: a release and the profile it falls in.
	_, _, err = ParseEngines([]string{"containerd-index-order", "containerd@2.0.4"})
	if !errors.Is(err, ErrSameEngine) || !strings.Contains(err.Error(), "containerd-index-order and containerd@2.0.4 are the same profile") {
		t.Errorf("same profile twice: %v, want ErrSameEngine naming both", err)
	}
	if _, _, err := ParseEngines([]string{"cri-o"}); !errors.Is(err, ErrUnknownEngine) {
		t.Errorf("cri-o: %v, want ErrUnknownEngine", err)
	}
	if es, dep, err := ParseEngines(nil); es != nil || dep != nil || err != nil {
		t.Errorf("nil: %v %v %v", es, dep, err)
	}
}
