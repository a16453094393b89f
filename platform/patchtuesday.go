package platform

import "time"

// windowLead is how long before its Patch Tuesday a cycle starts: MCR
// builds a month's base some days before it releases it, so a config's
// created falls before the Tuesday it ships on.
const windowLead = 7 * 24 * time.Hour

// PatchTuesday returns the second Tuesday of the month, midnight UTC: the
// day Microsoft publishes its monthly cumulative updates.
func PatchTuesday(year int, month time.Month) time.Time {
	first := time.Date(year, month, 1, 0, 0, 0, 0, time.UTC)
	offset := (int(time.Tuesday) - int(first.Weekday()) + 7) % 7
	return first.AddDate(0, 0, offset+7)
}

// Cycle returns the Patch Tuesday of the servicing cycle that holds t: the
// cycle of Patch Tuesday P runs from 7 days before P up to 7 days before
// the next Patch Tuesday. A revision belongs to the cycle that holds its
// config's created.
func Cycle(t time.Time) time.Time {
	u := t.UTC()
	p := PatchTuesday(u.Year(), u.Month())
	if u.Before(p.Add(-windowLead)) {
		prev := u.AddDate(0, 0, -u.Day()) // the last day of the previous month
		return PatchTuesday(prev.Year(), prev.Month())
	}
	return p
}

// PatchTuesdaysBehind counts the distinct cycles (see Cycle) of the newer
// revisions' created times, leaving out own's cycle: a variant on
// September's monthly revision, with September's out-of-band revision,
// October's and November's newer, is 2 Patch Tuesdays behind.
func PatchTuesdaysBehind(own time.Time, newer []time.Time) int {
	mine := Cycle(own)
	seen := map[time.Time]bool{}
	for _, t := range newer {
		if c := Cycle(t); !c.Equal(mine) {
			seen[c] = true
		}
	}
	return len(seen)
}

// DaysBetween returns the whole days from the UTC date of from to the UTC
// date of to (negative when to is earlier): how long a fix published at
// from has been available on to.
func DaysBetween(from, to time.Time) int {
	a, b := DateOf(from), DateOf(to)
	return int(b.Sub(a.Time).Hours() / 24)
}
