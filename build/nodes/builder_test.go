package nodes

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestResolveBuilder(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvBuildkitHost {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name, flag, env string
		getenv          bool
		want            Builder
		str             string
	}{
		{"flag wins", "unix:///a.sock", "tcp://b:1", true, Builder{Addr: "unix:///a.sock", Source: SourceOption}, "unix:///a.sock (from the builder option)"},
		{"env", "", "tcp://b:1", true, Builder{Addr: "tcp://b:1", Source: SourceEnv}, "tcp://b:1 (from $BUILDKIT_HOST)"},
		{"blank env", " ", " ", true, Builder{Addr: DefaultBuilderAddress, Source: SourceDefault}, "the default"},
		{"no env", "", "", false, Builder{Addr: DefaultBuilderAddress, Source: SourceDefault}, DefaultBuilderAddress},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g func(string) string
			if tc.getenv {
				g = env(tc.env)
			}
			got := ResolveBuilder(tc.flag, g)
			if got != tc.want || !strings.Contains(got.String(), tc.str) {
				t.Errorf("got %+v (%s), want %+v containing %q", got, got, tc.want, tc.str)
			}
		})
	}
}

func TestConnectErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		b        Builder
		want     error
		contains string
	}{
		{"no socket", Builder{Addr: "unix:///nonexistent/buildkitd.sock", Source: SourceOption, PingTimeout: time.Second}, ErrNoBuilder, "unix:///nonexistent/buildkitd.sock (from the builder option)"},
		{"refused tcp", Builder{Addr: "tcp://127.0.0.1:1", Source: SourceEnv, PingTimeout: time.Second}, ErrNoBuilder, "(from $BUILDKIT_HOST)"},
		{"tls on unix", Builder{Addr: "unix:///x.sock", Source: SourceOption, TLS: TLSOptions{CACert: "ca.pem"}}, ErrInvalidBuilder, "tcp://"},
		{"cert without key", Builder{Addr: "tcp://h:1", Source: SourceOption, TLS: TLSOptions{Cert: "c.pem"}}, ErrInvalidBuilder, "the client certificate and key go together"},
		{"unknown scheme", Builder{Addr: "bogus://x", Source: SourceOption}, ErrNoBuilder, "bogus://x"},
		{"empty", Builder{}, ErrInvalidBuilder, "empty"},
		{"the default address", Builder{Addr: "unix:///nonexistent/default.sock", Source: SourceDefault, PingTimeout: time.Second}, ErrNoBuilderGiven,
			"(the default: no builder was given and $BUILDKIT_HOST is not set)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Connect(ctx, tc.b)
			if c != nil {
				c.Close()
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.contains) {
				t.Errorf("Connect = %v, want %v containing %q", err, tc.want, tc.contains)
			}
			// Only the default address means that no builder was given.
			if given := errors.Is(err, ErrNoBuilderGiven); given != (tc.b.Source == SourceDefault) || given && !errors.Is(err, ErrNoBuilder) {
				t.Errorf("Connect = %v: matches ErrNoBuilderGiven %v", err, given)
			}
		})
	}
}

func TestTLSClientOpts(t *testing.T) {
	b := Builder{Addr: "tcp://h:1", TLS: TLSOptions{CACert: "ca.pem", Cert: "c.pem", Key: "k.pem", ServerName: "bk"}}
	opts, err := b.clientOpts()
	if err != nil || len(opts) != 2 {
		t.Errorf("clientOpts = %d opts, %v; want 2", len(opts), err)
	}
	if opts, err := (Builder{Addr: "tcp://h:1"}).clientOpts(); err != nil || opts != nil {
		t.Errorf("no TLS: %v %v", opts, err)
	}
}
