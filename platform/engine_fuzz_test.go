package platform

import (
	"strings"
	"testing"
)

// fuzzPlatform reads "os/arch[/variant][:os.version]" without validation,
// so that malformed versions reach the engines; "-" is no platform.
func fuzzPlatform(s string) *Platform {
	if s == "-" {
		return nil
	}
	spec, osv, _ := strings.Cut(s, ":")
	parts := strings.SplitN(spec, "/", 3)
	p := &Platform{OS: parts[0], OSVersion: osv}
	if len(parts) > 1 {
		p.Architecture = parts[1]
	}
	if len(parts) > 2 {
		p.Variant = parts[2]
	}
	return p
}

// FuzzSelect: no engine panics, and each selects -1 or an entry it
// matches: by the descriptor platform, or by the config when the entry has
// none. cands is ";"-separated "descriptor|config" pairs.
func FuzzSelect(f *testing.F) {
	f.Add("windows/amd64:10.0.26100.2894", "windows/amd64:10.0.26100.33674|-;windows/amd64:10.0.26100.9999|-;-|windows/amd64:10.0.20348.1")
	f.Add("windows/amd64:10.0.20348", "windows/amd64:10.0.17763.1|-;windows/amd64:10.0.20348.3091|-;linux/amd64|-")
	f.Add("windows/amd64:10.0.26100.1", "windows/amd64:10.0.20348.3091|-;windows/amd64:10.0.26100.2894|-;windows/amd64|-")
	f.Add("linux/arm64/v8", "linux/arm64|-;linux/arm64/v8|-;-|linux/arm64;-|-")
	f.Add("windows/amd64:10.0.26100.1", "windows/amd64:10.0.abc|-;windows/amd64:10.0|-;windows/amd64:10.0.26100.1.1|-;-|windows/amd64:x")
	f.Fuzz(func(t *testing.T, host, list string) {
		h := fuzzPlatform(host)
		if h == nil {
			return
		}
		var cands []Candidate
		for item := range strings.SplitSeq(list, ";") {
			d, c, _ := strings.Cut(item, "|")
			cands = append(cands, Candidate{Platform: fuzzPlatform(d), Config: fuzzPlatform(c)})
		}
		for _, e := range Engines() {
			sel := e.Select(*h, cands)
			if sel == -1 {
				continue
			}
			if sel < 0 || sel >= len(cands) {
				t.Fatalf("%s selected %d of %d", e.Name(), sel, len(cands))
			}
			c := cands[sel]
			p := c.Platform
			if p == nil {
				p = c.Config
			}
			if p == nil || !e.Match(*h, *p) {
				t.Fatalf("%s on %+v selected %d (%+v), which it does not match", e.Name(), *h, sel, c)
			}
		}
		_ = Compatible(ContainerdEngine(), *h, cands)
	})
}
