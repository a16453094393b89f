package platform

import (
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, and what it accepts formats to a string
// that parses back to the same platform.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"linux/amd64", "linux/arm64/v8", "windows/amd64:10.0.26100.2894",
		"windows(10.0.20348)/amd64", "windows(10.0.20348+win32k)/amd64", "windows/amd64:10.0.20348",
		"linux/amd64\x00", "windows/amd64:10.0.\u202e", "Windows/AMD64", "x86_64/linux", "windows(((/amd64", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		s2 := Format(p)
		q, err := Parse(s2)
		if err != nil {
			t.Fatalf("Parse(%q) = %+v, but Parse(Format = %q): %v", s, p, s2, err)
		}
		if p.OS != q.OS || p.Architecture != q.Architecture || p.Variant != q.Variant || p.OSVersion != q.OSVersion {
			t.Fatalf("round trip %q -> %q: %+v != %+v", s, s2, p, q)
		}
	})
}

// FuzzParseVersion: the version parsers never panic, and a parsed version
// formats to a string that parses back to it.
func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"10.0.26100.2894", "10.0.20348", "10.0.26100.9999", "10.0.abc.1", "1.2.3.4.5",
		"99999999999.0.0.0", "10.0.65536.1", "...", "10.0.17763.-1", "+1.0.0.0", "10.0.20348.0x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = Build(s)
		if v, err := ParseHostVersion(s); err == nil {
			if w, err := ParseHostVersion(v.String()); err != nil || w != v {
				t.Fatalf("ParseHostVersion(%q) = %+v, String %q reparses to %+v, %v", s, v, v.String(), w, err)
			}
		}
		v, err := ParseVersion(s)
		if err != nil {
			return
		}
		if !v.HasRevision || strings.Count(s, ".") != 3 {
			t.Fatalf("ParseVersion(%q) accepted %+v", s, v)
		}
		if w, err := ParseVersion(v.String()); err != nil || w != v || v.Compare(w) != 0 {
			t.Fatalf("ParseVersion(%q) = %+v, String %q reparses to %+v, %v", s, v, v.String(), w, err)
		}
	})
}
