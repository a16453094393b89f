package build

import (
	"testing"
)

func TestStripSyntax(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, ref string
		found               bool
	}{
		{"syntax line", "# syntax=docker/dockerfile:1\nFROM alpine\n", "#\nFROM alpine\n", "docker/dockerfile:1", true},
		{"spaces and CRLF", "#   syntax = docker/dockerfile:1.7\r\nFROM alpine\r\n", "#\r\nFROM alpine\r\n", "docker/dockerfile:1.7", true},
		{"after escape directive", "# escape=`\n# syntax=example.com/fe:1\nFROM alpine\n", "# escape=`\n#\nFROM alpine\n", "example.com/fe:1", true},
		{"none", "FROM alpine\n# syntax=late/is:ignored\n", "FROM alpine\n# syntax=late/is:ignored\n", "", false},
		{"check directive kept", "# check=skip=all\nFROM alpine\n", "# check=skip=all\nFROM alpine\n", "", false},
		{"no newline", "# syntax=a/b", "#", "a/b", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ref, found := StripSyntax([]byte(tc.in))
			if string(got) != tc.want || ref != tc.ref || found != tc.found {
				t.Errorf("StripSyntax = %q %q %t, want %q %q %t", got, ref, found, tc.want, tc.ref, tc.found)
			}
			if _, _, again := StripSyntax(got); again {
				t.Errorf("the result still has a syntax directive: %q", got)
			}
		})
	}
}
