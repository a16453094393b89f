package patchlevel

import (
	"reflect"
	"testing"
)

func TestRevisionTags(t *testing.T) {
	tags := []string{
		"ltsc2022", "ltsc2022-amd64", "ltsc2025",
		"10.0.20348.2700", "10.0.20348.2700-amd64",
		"10.0.20348.2762",       // no twin
		"10.0.20348.2849-amd64", // twin only
		"10.0.20348.2849-arm64",
		"10.0.26100.1742", "10.0.26100.1742-amd64", // another build
		"10.0.20348.02900", "10.0.20348.x", "10.0.20348", "10.0.203481.5", // not revisions
	}
	got := revisionTags(tags, 20348, "amd64")
	want := []revisionTag{
		{revision: 2700, tag: "10.0.20348.2700", twin: "10.0.20348.2700-amd64"},
		{revision: 2762, tag: "10.0.20348.2762"},
		{revision: 2849, twin: "10.0.20348.2849-amd64"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("revisionTags = %+v\nwant %+v", got, want)
	}
}
