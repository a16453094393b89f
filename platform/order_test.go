package platform

import (
	"testing"
)

func win(v string) Platform { return Platform{OS: "windows", Architecture: "amd64", OSVersion: v} }

func cands(ps ...Platform) []Candidate {
	var out []Candidate
	for i := range ps {
		p := ps[i]
		out = append(out, Candidate{Platform: &p})
	}
	return out
}

// Test_PlatformOrder is ported from containerd/platforms
// platform_windows_compat_test.go, run through the containerd profile's
// Select.
func Test_PlatformOrder(t *testing.T) {
	linux := Platform{Architecture: "amd64", OS: "linux"}
	ws2022 := win("10.0.20348.3091")
	ws2025 := win("10.0.26100.2894")
	ws2025Rev3000 := win("10.0.26100.3000")
	ws2025Patched := win("10.0.26200.0")
	for _, tc := range []struct {
		name      string
		host      Platform
		platforms []Platform
		want      Platform
	}{
		{"Windows Server 2022 should select 2022", ws2022, []Platform{linux, ws2022, ws2025}, ws2022},
		{"Windows Server 2025 should select 2025", ws2025, []Platform{linux, ws2022, ws2025}, ws2025},
		{"Windows Server 2025 should select 2025 latest rev", ws2025, []Platform{linux, ws2022, ws2025Rev3000}, ws2025Rev3000},
		{"Windows Server 2025 host past latest LTSC should still accept 2022", ws2025Patched, []Platform{linux, ws2022}, ws2022},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cands(tc.platforms...)
			i := ContainerdEngine().Select(tc.host, c)
			if i < 0 {
				t.Fatalf("no selection")
			}
			if got := *c[i].Platform; got.OS != tc.want.OS || got.OSVersion != tc.want.OSVersion {
				t.Errorf("got %s, want %s", Format(got), Format(tc.want))
			}
		})
	}
}

// TestSelectLinux: Linux hosts use containerd's Only, so amd64 also accepts
// 386 but prefers amd64.
func TestSelectLinux(t *testing.T) {
	c := cands(Platform{OS: "linux", Architecture: "386"}, Platform{OS: "linux", Architecture: "amd64"}, win("10.0.26100.1"))
	for _, e := range Engines() {
		if got := e.Select(Platform{OS: "linux", Architecture: "amd64"}, c); got != 1 {
			t.Errorf("%s selected %d, want 1", e.Name(), got)
		}
	}
	arm := cands(Platform{OS: "linux", Architecture: "arm64", Variant: "v8"})
	if got := (ContainerdEngine()).Select(Platform{OS: "linux", Architecture: "arm64"}, arm); got != 0 {
		t.Errorf("arm64/v8 not selected for arm64 host: %d", got)
	}
}
