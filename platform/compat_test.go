package platform

import (
	"fmt"
	"testing"
)

// Builds named as in github.com/containerd/platforms platform_windows_compat.go.
const (
	rs5         = 17763
	ltsc2019    = rs5
	v21H2Server = 20348
	ltsc2022    = v21H2Server
	v22H2Win11  = 22621
	v23H2       = 25398
	v25H1Server = 26100
	ltsc2025    = v25H1Server
)

// Test_PlatformCompat is ported from containerd/platforms
// platform_windows_compat_test.go and runs against the containerd profile.
// The containerd-1.7 column restates platforms v0.2.x, whose LTSC list holds
// only ltsc2022 (its floor for every host from 20348 on is 20348).
func Test_PlatformCompat(t *testing.T) {
	for _, tc := range []struct {
		hostOS    uint16
		ctrOS     uint16
		shouldRun bool
	}{
		{hostOS: ltsc2019, ctrOS: ltsc2019, shouldRun: true},
		{hostOS: ltsc2019, ctrOS: ltsc2022, shouldRun: false},
		{hostOS: ltsc2022, ctrOS: ltsc2019, shouldRun: false},
		{hostOS: ltsc2022, ctrOS: ltsc2022, shouldRun: true},
		{hostOS: v22H2Win11, ctrOS: ltsc2019, shouldRun: false},
		{hostOS: v22H2Win11, ctrOS: ltsc2022, shouldRun: true},
		{hostOS: v23H2, ctrOS: ltsc2019, shouldRun: false},
		{hostOS: v23H2, ctrOS: ltsc2022, shouldRun: true},
		{hostOS: ltsc2025, ctrOS: ltsc2022, shouldRun: true},
		{hostOS: ltsc2022, ctrOS: ltsc2025, shouldRun: false},
		{hostOS: ltsc2022, ctrOS: v22H2Win11, shouldRun: false},
		{hostOS: ltsc2025, ctrOS: v22H2Win11, shouldRun: true},
		{hostOS: 26200, ctrOS: ltsc2022, shouldRun: true},
		{hostOS: 26200, ctrOS: ltsc2025, shouldRun: true},
		{hostOS: 26200, ctrOS: v22H2Win11, shouldRun: true},
		{hostOS: 26200, ctrOS: ltsc2019, shouldRun: false},
	} {
		t.Run(fmt.Sprintf("Host_%d_Ctr_%d", tc.hostOS, tc.ctrOS), func(t *testing.T) {
			host := Platform{OS: "windows", Architecture: "amd64", OSVersion: fmt.Sprintf("10.0.%d", tc.hostOS)}
			ctr := Platform{OS: "windows", Architecture: "amd64", OSVersion: fmt.Sprintf("10.0.%d.1", tc.ctrOS)}
			for _, e := range []Engine{ContainerdEngine(), profileContainerdLegacy} {
				if got := e.Match(host, ctr); got != tc.shouldRun {
					t.Fatalf("%s: host %v should run guest %v: got %v, want %v", e.Name(), tc.hostOS, tc.ctrOS, got, tc.shouldRun)
				}
			}
		})
	}
}

// TestMatchComparerMatch_ABICheckWCOW is ported from containerd/platforms
// defaults_test.go.
func TestMatchComparerMatch_ABICheckWCOW(t *testing.T) {
	noVersion := Platform{Architecture: "amd64", OS: "windows"}
	ws2019 := Platform{Architecture: "amd64", OS: "windows", OSVersion: "10.0.17763"}
	ws2022 := Platform{Architecture: "amd64", OS: "windows", OSVersion: "10.0.20348"}
	win11 := Platform{Architecture: "amd64", OS: "windows", OSVersion: "10.0.22621"}
	for _, tc := range []struct {
		host, image Platform
		match       bool
	}{
		{ws2019, ws2019, true},
		{ws2019, ws2022, false},
		{ws2022, ws2019, false},
		{ws2022, ws2022, true},
		{win11, ws2019, false},
		{win11, ws2022, true},
		{noVersion, ws2019, true},
		{noVersion, noVersion, true},
		{noVersion, win11, true},
	} {
		if got := (ContainerdEngine()).Match(tc.host, tc.image); got != tc.match {
			t.Errorf("host %s image %s: match %v, want %v", Format(tc.host), Format(tc.image), got, tc.match)
		}
	}
}

// TestMatchRules covers the matching rules that the upstream tables leave
// implicit: missing os.version, malformed os.version, os.features, win32k,
// and architecture.
func TestMatchRules(t *testing.T) {
	host := Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100"}
	for _, tc := range []struct {
		name  string
		image Platform
		want  map[string]bool
	}{
		{"hostprocess without os.version", Platform{OS: "windows", Architecture: "amd64"},
			map[string]bool{Containerd: true, ContainerdLegacy: true, Docker: true}},
		{"malformed two dots missing", Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.26100"},
			map[string]bool{Containerd: false, ContainerdLegacy: false, Docker: true}},
		{"garbage build", Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.x.1"},
			map[string]bool{Containerd: false, ContainerdLegacy: false, Docker: true}},
		{"newer build", Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26200.1"},
			map[string]bool{Containerd: false, ContainerdLegacy: false, Docker: false}},
		{"ltsc2019 on 2025", Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.17763.6893"},
			map[string]bool{Containerd: false, ContainerdLegacy: false, Docker: true}},
		{"win32k is ignored", Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.1", OSFeatures: []string{"win32k"}},
			map[string]bool{Containerd: true, ContainerdLegacy: true, Docker: true}},
		{"unknown feature", Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.1", OSFeatures: []string{"gpu"}},
			map[string]bool{Containerd: false, ContainerdLegacy: true, Docker: true}},
		{"arm64", Platform{OS: "windows", Architecture: "arm64", OSVersion: "10.0.26100.1"},
			map[string]bool{Containerd: false, ContainerdLegacy: false, Docker: false}},
		{"linux", Platform{OS: "linux", Architecture: "amd64"},
			map[string]bool{Containerd: false, ContainerdLegacy: false, Docker: false}},
	} {
		for _, e := range []Engine{profileContainerd, profileContainerdLegacy, DockerEngine{}} {
			if got := e.Match(host, tc.image); got != tc.want[e.Name()] {
				t.Errorf("%s: %s: match %v, want %v", tc.name, e.Name(), got, tc.want[e.Name()])
			}
		}
	}
}
