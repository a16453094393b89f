package platform

import (
	"encoding/json"
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

// UnmarshalJSON reads what MarshalJSON prints ("" is the zero date), so
// that a report can be read back (imgctl patch --merge-reports).
func (d *Date) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("date: %w", err)
	}
	if s == "" {
		*d = Date{}
		return nil
	}
	v, err := ParseDate(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Lifecycles are the Windows base images' lifecycles imgctl knows, one row
// per LTSC base image of Microsoft's "Base image servicing lifecycles"
// page,
// https://learn.microsoft.com/en-us/virtualization/windowscontainers/deploy-containers/base-image-lifecycle
// (its source, MicrosoftDocs/Virtualization-Documentation, revision of
// 2025-07-15, read 2026-12-07): 2025 (26100) mainstream end 10/09/2029,
// extended 10/10/2034; 2022 (20348) 10/13/2026 and 10/14/2031; 2019
// (17763) 01/09/2024 and 01/09/2029; 2016 (14393) 01/11/2022 and
// 01/11/2027.
//
// The page lists no Annual Channel base image: a Windows Server 23H2
// (25398) host runs ltsc2022 images (the page's "Portability with Windows
// Server Annual Channel for Containers"). An image on such a build has no
// row here, and its phase is reported as unknown rather than guessed.
var Lifecycles = []Lifecycle{
	{Build: 14393, Release: "ltsc2016", Product: "Windows Server 2016", Channel: ChannelLTSC, MainstreamEnd: day(2022, 1, 11), ExtendedEnd: day(2027, 1, 11)},
	{Build: 17763, Release: "ltsc2019", Product: "Windows Server 2019", Channel: ChannelLTSC, MainstreamEnd: day(2024, 1, 9), ExtendedEnd: day(2029, 1, 9)},
	{Build: 20348, Release: "ltsc2022", Product: "Windows Server 2022", Channel: ChannelLTSC, MainstreamEnd: day(2026, 10, 13), ExtendedEnd: day(2031, 10, 14)},
	{Build: 26100, Release: "ltsc2025", Product: "Windows Server 2025", Channel: ChannelLTSC, MainstreamEnd: day(2029, 10, 9), ExtendedEnd: day(2034, 10, 10)},
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
