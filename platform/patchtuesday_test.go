package platform

import (
	"encoding/json"
	"testing"
	"time"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestPatchTuesday(t *testing.T) {
	// Second Tuesdays from Microsoft's release calendar.
	for _, tc := range []struct {
		y    int
		m    time.Month
		want string
	}{
		{2024, time.September, "2024-09-10"},
		{2024, time.October, "2024-10-08"},
		{2024, time.November, "2024-11-12"},
		{2025, time.January, "2025-01-14"},
		{2026, time.October, "2026-10-13"}, // Server 2022's mainstream end is a Patch Tuesday
		{2026, time.December, "2026-12-08"},
		{2026, time.September, "2026-09-08"}, // the 1st is a Tuesday
		{2026, time.July, "2026-07-14"},      // the 1st is a Wednesday
	} {
		if got := PatchTuesday(tc.y, tc.m).Format(time.DateOnly); got != tc.want {
			t.Errorf("PatchTuesday(%d, %s) = %s, want %s", tc.y, tc.m, got, tc.want)
		}
	}
}

func TestCycle(t *testing.T) {
	for _, tc := range []struct{ at, want string }{
		{"2024-09-10T00:00:00Z", "2024-09-10"}, // on the Tuesday
		{"2024-09-03T00:00:00Z", "2024-09-10"}, // 7 days before: the window opens
		{"2024-09-02T23:59:59Z", "2024-08-13"}, // just before: August's
		{"2024-09-30T10:00:00Z", "2024-09-10"}, // out-of-band, late September
		{"2024-10-01T00:00:00Z", "2024-10-08"}, // 7 days before October's
		{"2024-12-31T12:00:00Z", "2024-12-10"},
		{"2025-01-02T12:00:00Z", "2024-12-10"}, // January's opens on 01-07: still December's across the year
		{"2025-01-07T00:00:00Z", "2025-01-14"},
	} {
		if got := Cycle(utc(tc.at)).Format(time.DateOnly); got != tc.want {
			t.Errorf("Cycle(%s) = %s, want %s", tc.at, got, tc.want)
		}
	}
}

func TestPatchTuesdaysBehind(t *testing.T) {
	sept := utc("2024-09-05T18:00:00Z") // September's monthly, built before its Tuesday
	oob := utc("2024-09-26T18:00:00Z")  // September's out-of-band
	oct := utc("2024-10-03T18:00:00Z")
	nov := utc("2024-11-07T18:00:00Z")
	for _, tc := range []struct {
		name  string
		own   time.Time
		newer []time.Time
		want  int
	}{
		{"the issue's example: 3 revisions, 2 Patch Tuesdays", sept, []time.Time{oob, oct, nov}, 2},
		{"current", nov, nil, 0},
		{"only the out-of-band of its own cycle", sept, []time.Time{oob}, 0},
		{"one month", sept, []time.Time{oct}, 1},
		{"on the out-of-band", oob, []time.Time{oct, nov}, 2},
		{"a revision counted once per cycle", sept, []time.Time{oct, oct.Add(48 * time.Hour), nov}, 2},
	} {
		if got := PatchTuesdaysBehind(tc.own, tc.newer); got != tc.want {
			t.Errorf("%s: PatchTuesdaysBehind = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestDaysBetween(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		want     int
	}{
		{"2024-10-03T18:00:00Z", "2024-10-03T00:00:00Z", 0},
		{"2024-10-03T23:59:59Z", "2024-10-04T00:00:01Z", 1}, // whole UTC dates, not 24-hour spans
		{"2024-10-03T18:00:00Z", "2024-11-03T00:00:00Z", 31},
		{"2024-02-28T18:00:00Z", "2024-03-01T00:00:00Z", 2}, // a leap year
		{"2024-10-03T18:00:00Z", "2024-10-01T00:00:00Z", -2},
	} {
		if got := DaysBetween(utc(tc.from), utc(tc.to)); got != tc.want {
			t.Errorf("DaysBetween(%s, %s) = %d, want %d", tc.from, tc.to, got, tc.want)
		}
	}
}

func TestLifecyclePhase(t *testing.T) {
	for _, tc := range []struct {
		build       uint32
		at, want    string
		wantEnd     string
		wantRelease string
	}{
		{20348, "2026-10-13", PhaseMainstream, "2026-10-13", "ltsc2022"}, // the last day of mainstream
		{20348, "2026-10-14", PhaseExtended, "2031-10-14", "ltsc2022"},
		{20348, "2031-10-14", PhaseExtended, "2031-10-14", "ltsc2022"},
		{20348, "2031-10-15", PhaseEnded, "2031-10-14", "ltsc2022"},
		{17763, "2026-12-04", PhaseExtended, "2029-01-09", "ltsc2019"},
		{26100, "2026-12-04", PhaseMainstream, "2029-10-09", "ltsc2025"},
		{26100, "2029-10-10", PhaseExtended, "2034-10-10", "ltsc2025"},
		{14393, "2026-12-04", PhaseExtended, "2027-01-11", "ltsc2016"},
		{14393, "2027-01-12", PhaseEnded, "2027-01-11", "ltsc2016"},
	} {
		l, ok := LifecycleOf(tc.build)
		if !ok {
			t.Fatalf("no lifecycle for %d", tc.build)
		}
		at, err := ParseDate(tc.at)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Phase(at); got != tc.want || l.Release != tc.wantRelease || l.PhaseEnd(at).String() != tc.wantEnd {
			t.Errorf("%d at %s: %s %s until %s, want %s %s until %s", tc.build, tc.at, l.Release, got, l.PhaseEnd(at), tc.wantRelease, tc.want, tc.wantEnd)
		}
	}
	for _, b := range []uint32{19042, 25398} {
		if l, ok := LifecycleOf(b); ok {
			t.Errorf("%d has a lifecycle (%s); Microsoft's base image table lists only LTSC base images", b, l.Release)
		}
	}
}

// TestDateJSON: a Date reads back what it writes, "" is the zero date, and
// anything else is an error, so that a report with dates can be merged.
func TestDateJSON(t *testing.T) {
	type doc struct {
		At   Date `json:"at"`
		Zero Date `json:"zero"`
	}
	in := doc{At: Date{time.Date(2031, time.October, 14, 0, 0, 0, 0, time.UTC)}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"at":"2031-10-14","zero":""}` {
		t.Fatalf("marshalled %s", b)
	}
	var out doc
	if err := json.Unmarshal(b, &out); err != nil || !out.At.Equal(in.At.Time) || !out.Zero.IsZero() {
		t.Fatalf("read back %+v (%v)", out, err)
	}
	for _, bad := range []string{`{"at":"14/10/2031"}`, `{"at":2031}`, `{"at":"2031-10-14T00:00:00Z"}`} {
		if err := json.Unmarshal([]byte(bad), &out); err == nil {
			t.Errorf("%s: read as %v, want an error", bad, out.At)
		}
	}
}
