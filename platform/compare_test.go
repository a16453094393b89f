package platform

import (
	"slices"
	"testing"
)

func TestKey(t *testing.T) {
	if Key(Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}) != Key(Platform{OS: "linux", Architecture: "aarch64"}) {
		t.Errorf("arm64/v8 and aarch64 should share a key")
	}
	if Key(win("10.0.26100.1")) != Key(win("10.0.26100.2")) {
		t.Errorf("same build should share a key")
	}
	if Key(win("10.0.26100.1")) == Key(win("10.0.20348.1")) {
		t.Errorf("different builds must not share a key")
	}
}

func TestSameBuild(t *testing.T) {
	hostProcess := Platform{OS: "windows", Architecture: "amd64"}
	for _, tc := range []struct {
		name       string
		want, have Platform
		same       bool
	}{
		{"same build, other revision", win("10.0.26100.2894"), win("10.0.26100.33674"), true},
		{"want without revision", win("10.0.20348"), win("10.0.20348.3091"), true},
		{"other build", win("10.0.26100.2894"), win("10.0.20348.2894"), false},
		{"newer build is not the same", win("10.0.20348.1"), win("10.0.26100.1"), false},
		{"other major", win("10.0.26100.1"), win("11.0.26100.1"), true},
		{"want without os.version takes any build", hostProcess, win("10.0.26100.1"), true},
		{"want without os.version takes none", hostProcess, hostProcess, true},
		{"have without os.version has no build", win("10.0.26100.1"), hostProcess, false},
		{"unreadable have", win("10.0.26100.1"), win("10.0.x"), false},
		{"bare build number is unreadable", win("10.0.26100.1"), win("26100"), false},
		{"unreadable want", win("26100"), win("10.0.26100.1"), false},
		{"identical unreadable", win("10.0.x"), win("10.0.x"), true},
		{"other architecture", win("10.0.26100.1"), Platform{OS: "windows", Architecture: "arm64", OSVersion: "10.0.26100.1"}, false},
		{"other os", Platform{OS: "linux", Architecture: "amd64"}, win("10.0.26100.1"), false},
		{"normalized", Platform{OS: "linux", Architecture: "aarch64"}, Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}, true},
		{"linux ignores os.version", Platform{OS: "linux", Architecture: "amd64", OSVersion: "1"}, Platform{OS: "linux", Architecture: "amd64"}, true},
		{"os spelled in capitals", Platform{OS: "Windows", Architecture: "amd64", OSVersion: "10.0.20348.1"}, win("10.0.26100.1"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SameBuild(tc.want, tc.have); got != tc.same {
				t.Errorf("SameBuild(%s, %s) = %v, want %v", Format(tc.want), Format(tc.have), got, tc.same)
			}
		})
	}
}

func TestCompareNewestFirst(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"10.0.26100.1", "10.0.20348.9999", -1},
		{"10.0.20348.9999", "10.0.26100.1", 1},
		{"10.0.26100.33674", "10.0.26100.9999", -1}, // numeric, not string, order
		{"10.0.26100.2894", "10.0.26100.2894", 0},
		{"10.0.26100", "10.0.26100.0", 0},
		{"10.0.26100", "10.0.26100.1", 1},
		{"11.0.17763.1", "10.0.26100.1", -1},
		{"10.0.17763.1", "", -1},
		{"", "10.0.17763.1", 1},
		{"", "junk", -1},
		{"junk", "", 1},
		{"10.0.17763.1", "junk", -1},
		{"", "", 0},
		{"junk", "other", 0},
		{"10.0.99999.1", "10.0.x", 0}, // build out of range: unreadable
	} {
		if got := CompareNewestFirst(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareNewestFirst(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	vs := []string{"junk", "", "10.0.20348.3091", "10.0.26100.9999", "10.0.17763.1", "10.0.26100.33674"}
	slices.SortStableFunc(vs, CompareNewestFirst)
	want := []string{"10.0.26100.33674", "10.0.26100.9999", "10.0.20348.3091", "10.0.17763.1", "", "junk"}
	if !slices.Equal(vs, want) {
		t.Errorf("sorted %q, want %q", vs, want)
	}
}
