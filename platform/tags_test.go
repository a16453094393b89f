package platform

import "testing"

// TestTagBuild: the tags of mcr.microsoft.com's Windows images (nanoserver,
// servercore, servercore/iis, dotnet, powershell) and what they run on.
func TestTagBuild(t *testing.T) {
	for _, tc := range []struct {
		tag   string
		build uint32 // 0: no hint
	}{
		{"ltsc2019", 17763},
		{"1809", 17763},
		{"ltsc2022", 20348},
		{"ltsc2025", 26100},
		{"LTSC2025", 26100},
		{"ltsc2016", 14393},
		{"20H2", 19042},
		{"20h2", 19042},
		{"2004", 19041},
		{"23H2", 25398},
		{"windowsservercore-ltsc2025", 26100},
		{"windowsservercore-1809", 17763},
		{"nanoserver-ltsc2022", 20348},
		{"8.0-nanoserver-ltsc2022", 20348},
		{"8.0-windowsservercore-ltsc2019", 17763},
		{"10.0.100-nanoserver-ltsc2025", 26100}, // a .NET 10 SDK tag: 10.0.100 is no Windows build
		{"lts-nanoserver-ltsc2022", 20348},
		{"ltsc2022-amd64", 20348},
		{"1809-amd64", 17763},
		{"1809_KB5034127", 17763},
		{"10.0.20348", 20348},
		{"10.0.26100.2894", 26100},
		{"10.0.17763.5329-amd64", 17763},
		{"windowsservercore-10.0.20348.2582", 20348},
		{"ltsc2022-10.0.20348.2582", 20348},

		{"latest", 0},
		{"", 0},
		{"1.2.3", 0},
		{"10.0.100", 0},
		{"10.0", 0},
		{"10.0.x", 0},
		{"11.0.26100.1", 0},
		{"ltsc2030", 0},
		{"ltsc2022x", 0},
		{"xltsc2022", 0},
		{"windowsservercore", 0},
		{"ltsc2022-10.0.26100.1", 0}, // two builds: no hint
		{"ltsc2019-1809", 17763},     // two names of one build
	} {
		b, ok := TagBuild(tc.tag)
		if b != tc.build || ok != (tc.build != 0) {
			t.Errorf("TagBuild(%q) = %d, %t; want %d", tc.tag, b, ok, tc.build)
		}
	}
}

func TestBuildName(t *testing.T) {
	for b, want := range map[uint32]string{
		20348: "20348 (ltsc2022)",
		17763: "17763 (ltsc2019)",
		19042: "19042 (20H2)",
		14393: "14393 (ltsc2016)",
		12345: "12345",
	} {
		if got := BuildName(b); got != want {
			t.Errorf("BuildName(%d) = %q, want %q", b, got, want)
		}
	}
}
