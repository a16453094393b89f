package cli

import (
	"net/http"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// relFastRetries shortens the CLI's retry backoff and caps Retry-After so
// that a persistent fault fails in milliseconds.
func relFastRetries(t *testing.T) {
	t.Setenv("IMGCTL_RETRY_BASE", "1ms")
	t.Setenv("IMGCTL_RETRY_AFTER_MAX", "5ms")
}

// command is one imgctl command under reliability tests. args returns its
// arguments on reg; the key of its output (the digest for index create, the
// whole stdout otherwise) must not change under transient faults.
type relCommand struct {
	name  string
	args  func(reg *regtest.Registry, run string) []string
	key   func(stdout string) string
	write bool // it pushes: its faults include uploads and manifest PUTs
}

const relAppRef = "src/app:1"

// relFixture pushes the multi-OS index at src/app:1 and the four
// single images at src:*, and returns the single images' references.
func relFixture(t *testing.T, reg *regtest.Registry) []string {
	t.Helper()
	push(t, reg, relAppRef, regtest.Must(regtest.MultiOSIndex())(t))
	return indexFixture(t, reg)
}

// commands lists the commands that read or write a registry. run names a
// fresh target repository for commands that push.
func relCommands(srcs []string) []relCommand {
	whole := func(s string) string { return s }
	first := func(s string) string { d, _, _ := strings.Cut(s, "\n"); return d }
	return []relCommand{
		{name: "verify", key: whole, args: func(reg *regtest.Registry, _ string) []string {
			return []string{"verify", "-o", "json", reg.Host() + "/" + relAppRef}
		}},
		{name: "resolve", key: whole, args: func(reg *regtest.Registry, _ string) []string {
			return []string{"resolve", reg.Host() + "/" + relAppRef, "--platform", "windows/amd64:10.0.26100.2894"}
		}},
		{name: "inspect", key: whole, args: func(reg *regtest.Registry, _ string) []string {
			return []string{"inspect", reg.Host() + "/" + relAppRef}
		}},
		{name: "index-create", key: first, write: true, args: func(reg *regtest.Registry, run string) []string {
			return append([]string{"index", "create", "-t", reg.Host() + "/" + run + "/app:1"}, srcs...)
		}},
		{name: "index-remove", key: first, write: true, args: func(reg *regtest.Registry, run string) []string {
			return []string{"index", "remove", "-t", reg.Host() + "/" + run + "/app:1", "--platform", "linux/arm64", reg.Host() + "/" + relAppRef}
		}},
	}
}

// relTransientFaults fails the first two reads of manifests and blobs and, for
// commands that push, the first upload request and manifest PUT.
func relTransientFaults(k regtest.FaultKind, write bool) []regtest.Fault {
	fs := []regtest.Fault{
		{Kind: k, Route: regtest.RouteManifest, Method: http.MethodGet, First: 2},
		{Kind: k, Route: regtest.RouteBlob, Method: http.MethodGet, First: 2},
	}
	if write {
		fs = append(fs, regtest.Fault{Kind: k, Route: regtest.RouteUpload, First: 1},
			regtest.Fault{Kind: k, Route: regtest.RouteManifest, Method: http.MethodPut, First: 1},
			regtest.Fault{Kind: k, Route: regtest.RouteManifest, Method: http.MethodHead, First: 1})
	}
	return fs
}

// relFaultMessage lists what stderr may say for a persistent fault of kind k.
var relFaultMessage = map[regtest.FaultKind][]string{
	regtest.Fault500:      {"500"},
	regtest.Fault502:      {"502"},
	regtest.Fault503:      {"503"},
	regtest.Fault429:      {"429"},
	regtest.FaultReset:    {"connection reset", "EOF"},
	regtest.FaultTruncate: {"EOF"},
	regtest.FaultCorrupt:  {"does not match its digest"},
}

func relContainsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
