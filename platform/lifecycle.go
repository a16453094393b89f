package platform

import (
	"fmt"
	"time"
)

// Lifecycle phases of a Windows base image on a date.
const (
	PhaseMainstream = "mainstream"
	PhaseExtended   = "extended"
	PhaseEnded      = "ended"
)

// Phases lists the lifecycle phases, in order.
var Phases = []string{PhaseMainstream, PhaseExtended, PhaseEnded}

// Servicing channels of Windows Server releases.
const (
	ChannelLTSC   = "ltsc"
	ChannelAnnual = "annual"
)

// Lifecycle is the support lifecycle of the Windows base images of one
// build. End dates are the last day of the phase (UTC dates).
type Lifecycle struct {
	// Build is the Windows build, e.g. 20348.
	Build uint32 `json:"build"`
	// Release is Microsoft's tag name: ltsc2022, or 23H2 for an Annual
	// Channel release.
	Release string `json:"release"`
	// Product is the Windows Server product, e.g. Windows Server 2022.
	Product string `json:"product"`
	// Channel is ltsc or annual.
	Channel string `json:"channel"`
	// MainstreamEnd is the last day of mainstream support; for an Annual
	// Channel release, the end of servicing.
	MainstreamEnd Date `json:"mainstream_end"`
	// ExtendedEnd is the last day of extended support; zero for an Annual
	// Channel release, which has none.
	ExtendedEnd Date `json:"extended_end,omitzero"`
}

// Date is a calendar date (UTC), printed as 2006-01-02.
type Date struct{ time.Time }

// day returns the date of y-m-d.
func day(y int, m time.Month, d int) Date { return Date{time.Date(y, m, d, 0, 0, 0, 0, time.UTC)} }

// DateOf returns the UTC calendar date of t.
func DateOf(t time.Time) Date {
	u := t.UTC()
	return day(u.Year(), u.Month(), u.Day())
}

// ParseDate reads a date as 2006-01-02.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("date %q: want YYYY-MM-DD", s)
	}
	return Date{t}, nil
}

// String prints the date as 2006-01-02, or "" for the zero date.
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return d.Format(time.DateOnly)
}

// MarshalJSON prints the date as "2006-01-02" (not time.Time's RFC 3339,
// which the embedded time would otherwise give).
func (d Date) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// Lifecycles are the Windows base images' lifecycles imgctl knows.
//
// Sources (checked 2026-12-04):
//   - Microsoft, "Base image servicing lifecycles",
//     https://learn.microsoft.com/en-us/virtualization/windowscontainers/deploy-containers/base-image-lifecycle
//     (its 2019 revision, read in MicrosoftDocs/Virtualization-Documentation,
//     lists ltsc2019, build 17763: mainstream end 01/09/2024, extended
//     end 01/09/2029; verified).
//   - Microsoft's product lifecycle pages,
//     https://learn.microsoft.com/en-us/lifecycle/products/windows-server-2022
//     (2021-08-18 to 2026-10-13, extended 2031-10-14; verified against
//     Microsoft's lifecycle data for the Windows Server 2022 family),
//     https://learn.microsoft.com/en-us/lifecycle/products/windows-server-2025
//     (GA 2024-11-01; mainstream end 2029-11-13, extended end 2034-11-14:
//     not verified against Microsoft's page here, third-party summaries
//     agree on the years only),
//     and https://learn.microsoft.com/en-us/windows-server/get-started/windows-server-release-info
//     for the Annual Channel's 23H2, build 25398 (end of servicing
//     2025-10-24: not verified against Microsoft's page here).
var Lifecycles = []Lifecycle{
	{Build: 17763, Release: "ltsc2019", Product: "Windows Server 2019", Channel: ChannelLTSC, MainstreamEnd: day(2024, 1, 9), ExtendedEnd: day(2029, 1, 9)},
	{Build: 20348, Release: "ltsc2022", Product: "Windows Server 2022", Channel: ChannelLTSC, MainstreamEnd: day(2026, 10, 13), ExtendedEnd: day(2031, 10, 14)},
	{Build: 25398, Release: "23H2", Product: "Windows Server, version 23H2", Channel: ChannelAnnual, MainstreamEnd: day(2025, 10, 24)},
	{Build: 26100, Release: "ltsc2025", Product: "Windows Server 2025", Channel: ChannelLTSC, MainstreamEnd: day(2029, 11, 13), ExtendedEnd: day(2034, 11, 14)},
}

// LifecycleOf returns the lifecycle of a Windows build.
func LifecycleOf(build uint32) (Lifecycle, bool) {
	for _, l := range Lifecycles {
		if l.Build == build {
			return l, true
		}
	}
	return Lifecycle{}, false
}

// Phase returns the lifecycle phase on date at: mainstream up to and
// including MainstreamEnd, extended up to and including ExtendedEnd, ended
// after. An Annual Channel release goes from mainstream to ended.
func (l Lifecycle) Phase(at Date) string {
	switch {
	case !at.After(l.MainstreamEnd.Time):
		return PhaseMainstream
	case !l.ExtendedEnd.IsZero() && !at.After(l.ExtendedEnd.Time):
		return PhaseExtended
	}
	return PhaseEnded
}

// PhaseEnd returns the last day of the phase on date at: MainstreamEnd,
// ExtendedEnd, or for ended the day support ended.
func (l Lifecycle) PhaseEnd(at Date) Date {
	if l.Phase(at) == PhaseMainstream || l.ExtendedEnd.IsZero() {
		return l.MainstreamEnd
	}
	return l.ExtendedEnd
}
