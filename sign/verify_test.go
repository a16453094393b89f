package sign

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/registry"
)

// TestVerifyRegistryErrors: when the signatures cannot be read (the .sig
// tag or a signature's payload blob answers 500, 503 or 429 past the
// retries, the connection drops, the content does not match its digest, a
// 404 that is not the registry's "manifest unknown"), Verify fails closed
// with an error and no findings: never a pass, and never a bad-signature
// or unsigned finding, which would make an infrastructure fault look like
// a policy failure. A fault that clears within the retries changes
// nothing.
func TestVerifyRegistryErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := regtest.New(t)
	a, _ := testKeys(t)
	ref := signedIndex(t, reg, "app:1", a, Options{})
	snap := loadSnapshot(t, ref)
	sigRead := func(k regtest.FaultKind) regtest.Fault {
		return regtest.Fault{Kind: k, Route: regtest.RouteManifestByTag, Method: http.MethodGet, Suffix: ".sig", RetryAfter: "0"}
	}
	notFound := func(ct, body string) regtest.Fault {
		f := sigRead(regtest.FaultAnswer)
		f.Status, f.ContentType, f.Body = http.StatusNotFound, ct, body
		return f
	}
	for _, tc := range []struct {
		name  string
		fault regtest.Fault
		pass  bool // transient: the retries get through
	}{
		{"500 on the .sig tag", sigRead(regtest.Fault500), false},
		{"503 on the .sig tag", sigRead(regtest.Fault503), false},
		{"429 on the .sig tag", sigRead(regtest.Fault429), false},
		{"connection reset on the .sig tag", sigRead(regtest.FaultReset), false},
		{"corrupt .sig manifest", sigRead(regtest.FaultCorrupt), false},
		{"404 NAME_UNKNOWN on the .sig tag", notFound("application/json", `{"errors":[{"code":"NAME_UNKNOWN","message":"repository name not known to registry"}]}`), false},
		{"HTML 404 on the .sig tag", notFound("text/html", "<html><body><h1>404 Not Found</h1></body></html>"), false},
		{"500 on the signature payload", regtest.Fault{Kind: regtest.Fault500, Route: regtest.RouteBlob, Method: http.MethodGet}, false},
		{"500 once on the .sig tag", func() regtest.Fault { f := sigRead(regtest.Fault500); f.First = 1; return f }(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := regtest.NewFaults(tc.fault)
			rc := registry.New(registry.WithRetryBase(time.Millisecond), registry.WithRetryAfterMax(time.Millisecond))
			// The snapshot is read already: every request of Verify is a
			// signature read. One subject at a time keeps the faults apart.
			reg.SetMiddleware(f.Middleware)
			defer reg.SetMiddleware(nil)
			fs, err := Verify(ctx, ref.Context(), Subjects(snap), []Key{pubKey(t, a)}, VerifyOptions{Registry: rc})
			if f.Injected() == 0 {
				t.Fatal("no fault injected")
			}
			if tc.pass {
				if err != nil || len(fs) != 0 {
					t.Fatalf("a transient fault: %v, %v; want a pass", fs, err)
				}
				return
			}
			if err == nil || len(fs) != 0 || !registry.IsRegistryError(err) {
				t.Fatalf("findings %v, error %v; want a registry error and no findings", fs, err)
			}
		})
	}
}

// TestVerifyStillJudges: signatures that were read are still judged: none
// is unsigned, one by another key is a bad signature, and neither is an
// error.
func TestVerifyStillJudges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := regtest.New(t)
	a, b := testKeys(t)
	ref := pushIndex(t, reg, "app:1")
	snap := loadSnapshot(t, ref)
	fs, err := Verify(ctx, ref.Context(), Subjects(snap)[:1], []Key{pubKey(t, a)}, VerifyOptions{})
	if err != nil || len(fs) != 1 || fs[0].Rule != RuleUnsigned {
		t.Fatalf("unsigned: %v, %v", fs, err)
	}
	if _, err := Sign(ctx, ref, signer(t, b), Options{}); err != nil {
		t.Fatal(err)
	}
	fs, err = Verify(ctx, ref.Context(), Subjects(snap)[:1], []Key{pubKey(t, a)}, VerifyOptions{})
	if err != nil || len(fs) != 1 || fs[0].Rule != RuleBadSignature {
		t.Fatalf("signed by another key: %v, %v", fs, err)
	}
}
