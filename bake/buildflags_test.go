package bake_test

import (
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/session/secrets/secretsprovider"

	"github.com/imgctl/imgctl/bake"
)

// TestParseSecret: --secret as docker buildx build reads it (buildx's
// buildflags), and a secret without an id refused before any build.
func TestParseSecret(t *testing.T) {
	for in, want := range map[string]secretsprovider.Source{
		"id=npm,src=/run/npmrc":     {ID: "npm", FilePath: "/run/npmrc"},
		"id=npm,source=/run/npmrc":  {ID: "npm", FilePath: "/run/npmrc"},
		"id=tok,env=GH_TOKEN":       {ID: "tok", Env: "GH_TOKEN"},
		"type=env,id=x,src=MY_VAR":  {ID: "x", Env: "MY_VAR"},
		"type=file,id=k,src=/k.pem": {ID: "k", FilePath: "/k.pem"},
		`id=q,"src=/a,b"`:           {ID: "q", FilePath: "/a,b"}, // CSV quoting, as buildx
		// Neither src nor env: BuildKit's store reads the variable ID
		// when it is set, else the file ID (type=env alone too).
		"id=bare":              {ID: "bare"},
		"type=env,id=GH_TOKEN": {ID: "GH_TOKEN"},
	} {
		got, err := bake.ParseSecret(in)
		if err != nil || got != want {
			t.Errorf("ParseSecret(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"src=/x":          "id is required",
		"id=a,bogus=1":    "unexpected key 'bogus'",
		"id=a,type=tmpfs": `unsupported secret type "tmpfs"`,
		"justaword":       "must be a key=value pair",
		"":                "empty value",
	} {
		if _, err := bake.ParseSecret(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseSecret(%q) = %v, want an error with %q", in, err, msg)
		}
	}
}

// TestParseSSH: --ssh as docker buildx build reads it.
func TestParseSSH(t *testing.T) {
	for in, want := range map[string][2]any{
		"default":           {"default", []string(nil)},
		"gh=/a.sock,/b.pem": {"gh", []string{"/a.sock", "/b.pem"}},
		"=/a.sock":          {"", []string{"/a.sock"}}, // BuildKit's "default"
	} {
		c, err := bake.ParseSSH(in)
		if err != nil || c.ID != want[0] || !reflect.DeepEqual(c.Paths, want[1]) {
			t.Errorf("ParseSSH(%q) = %+v, %v; want %v", in, c, err, want)
		}
	}
	if _, err := bake.ParseSSH(""); err == nil {
		t.Error(`ParseSSH("") = nil error, want one`)
	}
}

// TestParseCache: --cache-from and --cache-to as docker buildx build reads
// them: a bare list of references is one registry cache each.
func TestParseCache(t *testing.T) {
	for in, want := range map[string][]client.CacheOptionsEntry{
		"type=registry,ref=reg/app:cache,mode=max": {{Type: "registry", Attrs: map[string]string{"ref": "reg/app:cache", "mode": "max"}}},
		"reg/app:cache":             {{Type: "registry", Attrs: map[string]string{"ref": "reg/app:cache"}}},
		"reg/a:c1,reg/a:c2":         {{Type: "registry", Attrs: map[string]string{"ref": "reg/a:c1"}}, {Type: "registry", Attrs: map[string]string{"ref": "reg/a:c2"}}},
		"type=local,src=/tmp/cache": {{Type: "local", Attrs: map[string]string{"src": "/tmp/cache"}}},
	} {
		got, err := bake.ParseCache(in)
		if err != nil || len(got) != len(want) {
			t.Errorf("ParseCache(%q) = %+v, %v; want %+v", in, got, err, want)
			continue
		}
		for i := range got {
			if got[i].Type != want[i].Type || !maps.Equal(got[i].Attrs, want[i].Attrs) {
				t.Errorf("ParseCache(%q)[%d] = %+v, want %+v", in, i, got[i], want[i])
			}
		}
	}
	for in, msg := range map[string]string{
		"ref=x":                 `type required for "ref=x"`,
		"type=registry,=x":      "an attribute has no key",
		"type=registry,novalue": "invalid value novalue",
		"":                      "empty value",
	} {
		if _, err := bake.ParseCache(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseCache(%q) = %v, want an error with %q", in, err, msg)
		}
	}
}

// TestTargetSessionEntries: a target's secret, ssh and cache entries mean
// what the same strings mean to imgctl build's flags (ParseSecret,
// ParseSSH, ParseCache), and what those refuse a target refuses, naming
// its file and line.
func TestTargetSessionEntries(t *testing.T) {
	dir := write(t, map[string]string{"docker-bake.hcl": `
target "a" {
  tags = ["r/a:1"]
  secret = ["id=npm,src=/run/npmrc", "type=env,id=x,src=MY_VAR"]
  ssh = ["gh=/a.sock,/b.pem"]
  cache-from = ["type=registry,ref=r/a:cache"]
  cache-to = ["type=local,dest=/tmp/c"]
}
target "nosecretid" {
  tags = ["r/b:1"]
  secret = ["src=/x"]
}
target "emptycachekey" {
  tags = ["r/c:1"]
  cache-to = ["type=registry,=x"]
}
`})
	ts, err := plan(t, dir, []string{"docker-bake.hcl"}, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	o := ts[0]
	for i, s := range []string{"id=npm,src=/run/npmrc", "type=env,id=x,src=MY_VAR"} {
		if want, err := bake.ParseSecret(s); err != nil || i >= len(o.Secrets) || o.Secrets[i] != want {
			t.Errorf("secret %q: target has %+v, build's flag %+v (%v)", s, o.Secrets, want, err)
		}
	}
	if want, err := bake.ParseSSH("gh=/a.sock,/b.pem"); err != nil || len(o.SSH) != 1 || !reflect.DeepEqual(o.SSH[0], want) {
		t.Errorf("ssh: target has %+v, build's flag %+v (%v)", o.SSH, want, err)
	}
	for _, c := range []struct {
		s   string
		got []client.CacheOptionsEntry
	}{{"type=registry,ref=r/a:cache", o.CacheFrom}, {"type=local,dest=/tmp/c", o.CacheTo}} {
		want, err := bake.ParseCache(c.s)
		if err != nil || !reflect.DeepEqual(c.got, want) {
			t.Errorf("cache %q: target has %+v, build's flag %+v (%v)", c.s, c.got, want, err)
		}
	}
	for target, msg := range map[string]string{
		"nosecretid":    `docker-bake.hcl:11: target "nosecretid": invalid target: secret "src=/x": id is required`,
		"emptycachekey": `docker-bake.hcl:15: target "emptycachekey": invalid target: cache "type=registry,=x": an attribute has no key`,
	} {
		_, err := plan(t, dir, []string{"docker-bake.hcl"}, []string{target})
		if !errors.Is(err, bake.ErrInvalidTarget) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want ErrInvalidTarget with %q", target, err, msg)
		}
	}
}
