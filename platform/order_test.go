package platform

import (
	"reflect"
	"sort"
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
			i := ContainerdEngine{}.Select(tc.host, c)
			if i < 0 {
				t.Fatalf("no selection")
			}
			if got := *c[i].Platform; got.OS != tc.want.OS || got.OSVersion != tc.want.OSVersion {
				t.Errorf("got %s, want %s", Format(got), Format(tc.want))
			}
		})
	}
}

// TestContainerdComparerLess is ported from containerd/platforms
// defaults_test.go TestWindowsMatchComparerLess.
func TestContainerdComparerLess(t *testing.T) {
	m := containerdComparer(win("10.0.17763.1"))
	ps := []Platform{win("10.0.17764.1"), {Architecture: "amd64", OS: "windows"}, win("10.0.17763.1"), win("10.0.17763.2"), win("10.0.17762.1")}
	want := []Platform{win("10.0.17763.2"), win("10.0.17763.1"), {Architecture: "amd64", OS: "windows"}, win("10.0.17764.1"), win("10.0.17762.1")}
	sort.SliceStable(ps, func(i, j int) bool { return m.Less(ToSpec(ps[i]), ToSpec(ps[j])) })
	if !reflect.DeepEqual(ps, want) {
		t.Errorf("got %v\nwant %v", ps, want)
	}
}

// TestEngineDisagreement holds the cases DESIGN.md names where engines pick
// different variants of one index.
func TestEngineDisagreement(t *testing.T) {
	host2025 := win("10.0.26100")
	for _, tc := range []struct {
		name string
		host Platform
		list []Platform
		want map[string]string // engine -> selected os.version ("" = none)
	}{
		{
			name: "string ordering quirk: 9999 sorts above 33674",
			host: host2025,
			list: []Platform{win("10.0.26100.33674"), win("10.0.26100.9999")},
			want: map[string]string{Containerd: "10.0.26100.9999", Containerd17: "10.0.26100.33674", Docker: "10.0.26100.33674"},
		},
		{
			name: "1.7 orders by revision only: 20348.3091 beats 26100.2894",
			host: host2025,
			list: []Platform{win("10.0.26100.2894"), win("10.0.20348.3091")},
			want: map[string]string{Containerd: "10.0.26100.2894", Containerd17: "10.0.20348.3091", Docker: "10.0.26100.2894"},
		},
		{
			name: "docker keeps list order when no build is exact",
			host: win("10.0.26200"),
			list: []Platform{win("10.0.20348.3091"), win("10.0.26100.2894")},
			want: map[string]string{Containerd: "10.0.26100.2894", Containerd17: "10.0.20348.3091", Docker: "10.0.20348.3091"},
		},
		{
			name: "docker may pick an ltsc2019 image on a 2022 host",
			host: win("10.0.20348"),
			list: []Platform{win("10.0.17763.6893")},
			want: map[string]string{Containerd: "", Containerd17: "", Docker: "10.0.17763.6893"},
		},
		{
			name: "docker prefers the exact build over list order",
			host: host2025,
			list: []Platform{win("10.0.20348.3091"), win("10.0.26100.2894")},
			want: map[string]string{Containerd: "10.0.26100.2894", Containerd17: "10.0.20348.3091", Docker: "10.0.26100.2894"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cands(tc.list...)
			for _, e := range Engines() {
				got := ""
				if i := e.Select(tc.host, c); i >= 0 {
					got = c[i].Platform.OSVersion
				}
				if got != tc.want[e.Name()] {
					t.Errorf("%s picked %q, want %q", e.Name(), got, tc.want[e.Name()])
				}
			}
		})
	}
}

// TestSelectWithoutPlatform: entries without a platform go last and are
// judged by their config (containerd); Docker never picks them.
func TestSelectWithoutPlatform(t *testing.T) {
	host := win("10.0.26100")
	good := win("10.0.26100.1")
	bad := win("10.0.26200.1")
	linux := Platform{OS: "linux", Architecture: "amd64"}
	for _, tc := range []struct {
		name  string
		cands []Candidate
		want  map[string]int
	}{
		{"config matches", []Candidate{{Platform: &linux}, {Config: &good}}, map[string]int{Containerd: 1, Containerd17: 1, Docker: -1}},
		{"config does not match", []Candidate{{Platform: &linux}, {Config: &bad}}, map[string]int{Containerd: -1, Containerd17: -1, Docker: -1}},
		{"platformed entry wins", []Candidate{{Config: &good}, {Platform: &good}}, map[string]int{Containerd: 1, Containerd17: 1, Docker: 1}},
		{"unknown config", []Candidate{{}}, map[string]int{Containerd: -1, Containerd17: -1, Docker: -1}},
	} {
		for _, e := range Engines() {
			if got := e.Select(host, tc.cands); got != tc.want[e.Name()] {
				t.Errorf("%s: %s selected %d, want %d", tc.name, e.Name(), got, tc.want[e.Name()])
			}
		}
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
	if got := (ContainerdEngine{}).Select(Platform{OS: "linux", Architecture: "arm64"}, arm); got != 0 {
		t.Errorf("arm64/v8 not selected for arm64 host: %d", got)
	}
}
