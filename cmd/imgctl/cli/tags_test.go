package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
)

// TestTagsRepeatable: -t is repeatable on index create, rebase and build.
// Every tag points at the one digest, and -o json lists them. Every tag is
// checked before the first write: one taken tag among several is refused
// with nothing written, on each verb (build before any builder is
// contacted). Tags in two repositories, or none, are usage errors.
func TestTagsRepeatable(t *testing.T) {
	relFastRetries(t)
	reg := regtest.New(t)
	srcs := relFixture(t, reg)
	app := rebaseFixture(t, reg)
	moveBases(t, reg, winFeb)
	host := func(s string) string { return reg.Host() + "/" + s }
	taken := host("out/app:taken")
	if _, errOut, code := run(t, append([]string{"index", "create", "--no-verify", "-t", taken}, srcs[1])...); code != 0 {
		t.Fatalf("taking the tag: exit %d %s", code, errOut)
	}

	t.Run("index create", func(t *testing.T) {
		out, errOut, code := run(t, append([]string{"index", "create", "-o", "json", "-t", host("out/app:1.4.2"), "-t", host("out/app:sha-abc123"), "-t", host("out/app:1.4.2")}, srcs...)...)
		var res struct {
			Digest string
			Tags   []string
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		if strings.Join(res.Tags, " ") != host("out/app:1.4.2")+" "+host("out/app:sha-abc123") {
			t.Errorf("tags %v, want the two tags once each, in order", res.Tags)
		}
		for _, tag := range []string{"out/app:1.4.2", "out/app:sha-abc123"} {
			if got := sigHead(t, reg, tag); got != res.Digest {
				t.Errorf("%s points at %q, want %s", tag, got, res.Digest)
			}
		}
	})
	t.Run("rebase", func(t *testing.T) {
		out, errOut, code := run(t, "rebase", app, "-o", "json", "-t", host("out/app:2025-02"), "-t", host("out/app:monthly"))
		var res struct {
			Tags      []string
			NewDigest string `json:"new_digest"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || res.NewDigest == "" {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		for _, tag := range []string{"out/app:2025-02", "out/app:monthly"} {
			if got := sigHead(t, reg, tag); got != res.NewDigest {
				t.Errorf("%s points at %q, want %s", tag, got, res.NewDigest)
			}
		}
		if len(res.Tags) != 2 {
			t.Errorf("tags %v, want both", res.Tags)
		}
	})

	ctxDir := scratchContext(t)
	for _, tc := range []struct {
		name, fresh string
		args        func(tags ...string) []string
	}{
		{"index create refuses", "out/app:new-index", func(tags ...string) []string {
			return append(append([]string{"index", "create"}, tags...), srcs...)
		}},
		{"rebase refuses", "out/app:new-rebase", func(tags ...string) []string { return append([]string{"rebase", app}, tags...) }},
		{"build refuses", "out/app:new-build", func(tags ...string) []string {
			return append(append([]string{"build", "--builder", "unix:///nonexistent/buildkitd.sock", "--platform", "linux/amd64"}, tags...), ctxDir)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var writes atomic.Int64
			reg.SetMiddleware(func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method != http.MethodGet && r.Method != http.MethodHead {
						writes.Add(1)
					}
					h.ServeHTTP(w, r)
				})
			})
			_, errOut, code := run(t, tc.args("-t", host(tc.fresh), "-t", taken)...)
			reg.SetMiddleware(nil)
			if code != ExitError || !strings.Contains(errOut, registry.ErrTagExists.Error()) || !strings.Contains(errOut, taken) {
				t.Fatalf("exit %d, want 2 naming %s:\n%s", code, taken, errOut)
			}
			if !relTagAbsent(t, reg, "out/app:"+strings.TrimPrefix(tc.fresh, "out/app:")) {
				t.Errorf("%s was written though %s was refused", tc.fresh, taken)
			}
			if w := writes.Load(); w != 0 {
				t.Errorf("%d write requests before the refusal, want none", w)
			}
		})
	}
	for _, args := range [][]string{
		append([]string{"index", "create", "-t", host("out/app:1"), "-t", host("other/app:1")}, srcs...),
		append([]string{"index", "create"}, srcs...),
		{"rebase", app, "-t", host("out/app:1"), "-t", host("other/app:1")},
	} {
		if _, errOut, code := run(t, args...); code != ExitError || !strings.Contains(errOut, "-t/--tag") {
			t.Errorf("%v: exit %d, want 2 naming -t/--tag:\n%s", args, code, errOut)
		}
	}
}

// TestFaultsTagsRefusedLater: a refusal at a later tag (a registry's
// immutability rule, a persistent 500 on that tag's PUT) cannot be undone
// at the tags already written, since a registry has no transaction over
// tags. It is reported per tag: the earlier tags point at the complete
// new index, the refused one and those after it are untouched, and exit
// is 2. A re-run once the fault clears finishes the job at the same
// digest. Logged for the fault table as tags-refused-later.
func TestFaultsTagsRefusedLater(t *testing.T) {
	relFastRetries(t)
	for _, fault := range []struct {
		name string
		f    regtest.Fault
	}{
		{"immutable", regtest.Fault{Kind: regtest.FaultAnswer, Route: regtest.RouteManifestByTag, Method: http.MethodPut, Suffix: "/manifests/b",
			Status: http.StatusPreconditionFailed, Body: `{"errors":[{"code":"PRECONDITION","message":"'app:b' configured as immutable"}]}`}},
		{"500-persistent", regtest.Fault{Kind: regtest.Fault500, Route: regtest.RouteManifestByTag, Method: http.MethodPut, Suffix: "/manifests/b"}},
	} {
		for _, verb := range []string{"index-create", "rebase"} {
			t.Run(fault.name+"/"+verb, func(t *testing.T) {
				reg := regtest.New(t)
				srcs := relFixture(t, reg)
				app := rebaseFixture(t, reg)
				moveBases(t, reg, winFeb)
				host := func(s string) string { return reg.Host() + "/" + s }
				args := append([]string{"index", "create", "--no-verify"}, srcs...)
				if verb == "rebase" {
					args = []string{"rebase", app, "--no-verify"}
				}
				args = append(args, "-t", host("out/app:a"), "-t", host("out/app:b"), "-t", host("out/app:c"))
				f := regtest.NewFaults(fault.f)
				reg.SetMiddleware(f.Middleware)
				out, errOut, code := run(t, args...)
				a, b, c := sigHead(t, reg, "out/app:a"), sigHead(t, reg, "out/app:b"), sigHead(t, reg, "out/app:c")
				reg.SetMiddleware(nil)
				reported := strings.Contains(errOut, host("out/app:a")+": tagged "+a) &&
					strings.Contains(errOut, host("out/app:c")+": not written")
				again, errOut2, code2 := run(t, args...)
				final := sigHead(t, reg, "out/app:a")
				survived := code == ExitError && out == "" && a != "" && b == "" && c == "" && reported && code2 == 0 &&
					final == a && sigHead(t, reg, "out/app:b") == a && sigHead(t, reg, "out/app:c") == a
				regtest.LogFault(t, "tags-refused-later-"+fault.name, verb, f.Injected(), survived)
				if !survived {
					t.Errorf("faulted: exit %d, a=%q b=%q c=%q\n%s%s\nre-run: exit %d, a=%q\n%s%s", code, a, b, c, out, errOut, code2, final, again, errOut2)
				}
			})
		}
	}
}

// scratchContext writes a build context whose Dockerfile copies one file
// onto scratch: enough for build's checks that refuse before any builder
// is contacted.
func scratchContext(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY hello /hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hello"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRenamedFlags: the old spellings of renamed flags still work, as
// hidden aliases that warn: --target of verify, index and rebase (now
// --windows, as on build) and --concurrency of verify and check-workload
// (now --jobs, as on index and rebase). --target stays the Dockerfile
// stage on build and lint.
func TestRenamedFlags(t *testing.T) {
	reg := regtest.New(t)
	ref := push(t, reg, "app:1", regtest.Must(regtest.MultiOSIndex())(t))
	want, _, wcode := run(t, "verify", ref, "--windows", "ltsc2022", "--jobs", "2", "-o", "json")
	got, errOut, code := run(t, "verify", ref, "--target", "ltsc2022", "--concurrency", "2", "-o", "json")
	if code != wcode || got != want || !strings.Contains(errOut, "--target is deprecated, use --windows") ||
		!strings.Contains(errOut, "--concurrency is deprecated, use --jobs") {
		t.Fatalf("verify --target --concurrency: exit %d (want %d), same output %t\n%s", code, wcode, got == want, errOut)
	}
	root := NewRootCmd()
	for _, c := range []struct{ verb, old, name string }{
		{"verify", "target", "windows"}, {"verify", "concurrency", "jobs"}, {"index create", "target", "windows"},
		{"rebase", "target", "windows"}, {"check-workload", "concurrency", "jobs"},
	} {
		cmd, _, err := root.Find(strings.Fields(c.verb))
		if err != nil {
			t.Fatal(err)
		}
		f, n := cmd.Flags().Lookup(c.old), cmd.Flags().Lookup(c.name)
		if f == nil || n == nil || !f.Hidden || f.Annotations[renamedAnnotation][0] != c.name || f.Value != n.Value {
			t.Errorf("%s: --%s is not a hidden, deprecated alias of --%s", c.verb, c.old, c.name)
		}
	}
	for _, verb := range []string{"build", "lint"} {
		cmd, _, _ := root.Find([]string{verb})
		if f := cmd.Flags().Lookup("target"); f == nil || f.Hidden || !strings.Contains(f.Usage, "stage") {
			t.Errorf("%s --target is not the Dockerfile stage", verb)
		}
	}
}
