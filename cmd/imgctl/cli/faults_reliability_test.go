package cli

import (
	"net/http"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestFaultsTransient: every command completes with the same result when
// the registry fails the first requests of each kind.
func TestFaultsTransient(t *testing.T) {
	relFastRetries(t)
	for _, k := range regtest.FaultKinds {
		for _, c := range relCommands(nil) {
			t.Run(string(k)+"/"+c.name, func(t *testing.T) {
				reg := regtest.New(t)
				c := relCommands(relFixture(t, reg))[relIndexOf(c.name)]
				want, errOut, code := run(t, c.args(reg, "base")...)
				if code != 0 {
					t.Fatalf("baseline: exit %d\n%s", code, errOut)
				}
				f := regtest.NewFaults(relTransientFaults(k, c.write)...)
				reg.SetMiddleware(f.Middleware)
				got, errOut, code := run(t, c.args(reg, "faulted")...)
				survived := code == 0 && c.key(got) == c.key(want) && f.Injected() > 0
				regtest.LogFault(t, string(k), c.name, f.Injected(), survived)
				if !survived {
					t.Errorf("exit %d, %d faults injected\n%s\nwant %s\n%s", code, f.Injected(), got, want, errOut)
				}
			})
		}
	}
}

// TestFaultsPersistent: when every manifest read fails, every command
// exits 2 with a message naming the failure and prints no result; a slow
// registry is not a failure.
func TestFaultsPersistent(t *testing.T) {
	relFastRetries(t)
	for _, k := range regtest.FaultKinds {
		for _, c := range relCommands(nil) {
			t.Run(string(k)+"/"+c.name, func(t *testing.T) {
				reg := regtest.New(t)
				c := relCommands(relFixture(t, reg))[relIndexOf(c.name)]
				f := regtest.NewFaults(regtest.Fault{Kind: k, Route: regtest.RouteManifest, Method: http.MethodGet, Delay: 5e6})
				reg.SetMiddleware(f.Middleware)
				out, errOut, code := run(t, c.args(reg, "faulted")...)
				var survived bool
				if k == regtest.FaultSlow {
					survived = code == 0
				} else {
					survived = code == ExitError && out == "" && strings.HasPrefix(errOut, "imgctl: ") &&
						relContainsAny(errOut, relFaultMessage[k])
				}
				if c.write {
					survived = survived && relTagAbsent(t, reg, "faulted/app:1") == (k != regtest.FaultSlow)
				}
				regtest.LogFault(t, string(k)+"-persistent", c.name, f.Injected(), survived)
				if !survived || f.Injected() == 0 {
					t.Errorf("exit %d, %d faults\nstdout %q\nstderr %s", code, f.Injected(), out, errOut)
				}
			})
		}
	}
}

// TestFaultsHalfway: uploads start failing after a few requests; nothing
// is tagged, and once the fault clears a re-run publishes the same digest.
func TestFaultsHalfway(t *testing.T) {
	relFastRetries(t)
	for _, k := range []regtest.FaultKind{regtest.Fault500, regtest.Fault503, regtest.FaultReset} {
		for _, name := range []string{"index-create", "index-remove"} {
			t.Run(string(k)+"/"+name, func(t *testing.T) {
				reg := regtest.New(t)
				c := relCommands(relFixture(t, reg))[relIndexOf(name)]
				want, _, code := run(t, c.args(reg, "base")...)
				if code != 0 {
					t.Fatal("baseline failed")
				}
				f := regtest.NewFaults(regtest.Fault{Kind: k, Route: regtest.RouteManifest, Method: http.MethodPut, After: 1})
				reg.SetMiddleware(f.Middleware)
				_, errOut, code := run(t, c.args(reg, "faulted")...)
				absent := relTagAbsent(t, reg, "faulted/app:1")
				reg.SetMiddleware(nil)
				got, errOut2, code2 := run(t, c.args(reg, "faulted")...)
				survived := code == ExitError && absent && code2 == 0 && c.key(got) == c.key(want)
				regtest.LogFault(t, string(k)+"-halfway", c.name, f.Injected(), survived)
				if !survived {
					t.Errorf("faulted: exit %d, tag absent %t: %s\nre-run: exit %d %s %s", code, absent, errOut, code2, got, errOut2)
				}
			})
		}
	}
}

// TestFaultBearerAuth: every command works against a registry that
// answers 401 with a Bearer challenge and a test-served token endpoint.
func TestFaultBearerAuth(t *testing.T) {
	for _, c := range relCommands(nil) {
		t.Run(c.name, func(t *testing.T) {
			ts := &regtest.BearerAuth{Token: "tok-" + c.name, Service: "regtest"}
			reg := regtest.New(t)
			c := relCommands(relFixture(t, reg))[relIndexOf(c.name)]
			want, _, _ := run(t, c.args(reg, "base")...)
			reg.SetMiddleware(ts.Middleware)
			got, errOut, code := run(t, c.args(reg, "auth")...)
			survived := code == 0 && c.key(got) == c.key(want) && ts.TokenRequests() > 0
			regtest.LogFault(t, "bearer-challenge", c.name, 1, survived)
			if !survived {
				t.Errorf("exit %d, %d token requests\n%s\n%s", code, ts.TokenRequests(), got, errOut)
			}
		})
	}
}

func relIndexOf(name string) int {
	for i, c := range relCommands(nil) {
		if c.name == name {
			return i
		}
	}
	panic("no command " + name)
}

// relTagAbsent reports whether repo:tag is missing from reg, read without the
// fault middleware.
func relTagAbsent(t *testing.T, reg *regtest.Registry, ref string) bool {
	t.Helper()
	resp, err := http.Head(reg.URL() + "/v2/" + strings.Replace(ref, ":", "/manifests/", 1))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusNotFound
}
