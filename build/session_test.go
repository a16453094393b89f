package build

import (
	"errors"
	"maps"
	"testing"

	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/session/secrets/secretsprovider"
)

func TestParseSecret(t *testing.T) {
	for in, want := range map[string]secretsprovider.Source{
		"id=npm,src=/run/npmrc":     {ID: "npm", FilePath: "/run/npmrc"},
		"id=npm,source=/run/npmrc":  {ID: "npm", FilePath: "/run/npmrc"},
		"id=tok,env=GH_TOKEN":       {ID: "tok", Env: "GH_TOKEN"},
		"type=env,id=GH_TOKEN":      {ID: "GH_TOKEN", Env: "GH_TOKEN"},
		"type=env,id=x,src=MY_VAR":  {ID: "x", Env: "MY_VAR"},
		"type=file,id=k,src=/k.pem": {ID: "k", FilePath: "/k.pem"},
		"id=bare":                   {ID: "bare"},
	} {
		got, err := ParseSecret(in)
		if err != nil || got != want {
			t.Errorf("ParseSecret(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"src=/x", "id=a,bogus=1", "id=a,type=tmpfs", "justaword"} {
		if _, err := ParseSecret(in); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("ParseSecret(%q) = %v, want ErrInvalidOptions", in, err)
		}
	}
}

func TestParseSSH(t *testing.T) {
	c, err := ParseSSH("default")
	if err != nil || c.ID != "default" || c.Paths != nil {
		t.Errorf("default = %+v %v", c, err)
	}
	c, err = ParseSSH("gh=/a.sock,/b.pem")
	if err != nil || c.ID != "gh" || len(c.Paths) != 2 || c.Paths[1] != "/b.pem" {
		t.Errorf("gh = %+v %v", c, err)
	}
	if _, err := ParseSSH("=x"); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("=x: %v", err)
	}
}

func TestParseCache(t *testing.T) {
	for in, want := range map[string]client.CacheOptionsEntry{
		"type=registry,ref=reg/app:cache,mode=max": {Type: "registry", Attrs: map[string]string{"ref": "reg/app:cache", "mode": "max"}},
		"reg/app:cache":             {Type: "registry", Attrs: map[string]string{"ref": "reg/app:cache"}},
		"type=local,src=/tmp/cache": {Type: "local", Attrs: map[string]string{"src": "/tmp/cache"}},
	} {
		got, err := ParseCache(in)
		if err != nil || got.Type != want.Type || !maps.Equal(got.Attrs, want.Attrs) {
			t.Errorf("ParseCache(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"ref=x", "type=registry,=x", "type=registry,novalue"} {
		if _, err := ParseCache(in); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("ParseCache(%q) = %v, want ErrInvalidOptions", in, err)
		}
	}
}

func TestCacheForVariant(t *testing.T) {
	in := []client.CacheOptionsEntry{
		{Type: "registry", Attrs: map[string]string{"ref": "reg:5000/app:cache", "mode": "max"}},
		{Type: "registry", Attrs: map[string]string{"ref": "reg:5000/app"}},
		{Type: "registry", Attrs: map[string]string{"ref": "reg/app@sha256:abc"}},
		{Type: "local", Attrs: map[string]string{"dest": "/c"}},
	}
	got := cacheForVariant(in, "ltsc2022", true)
	for i, want := range []string{"reg:5000/app:cache-ltsc2022", "reg:5000/app:ltsc2022", "reg/app@sha256:abc", ""} {
		if got[i].Attrs["ref"] != want {
			t.Errorf("entry %d ref = %q, want %q", i, got[i].Attrs["ref"], want)
		}
	}
	if in[0].Attrs["ref"] != "reg:5000/app:cache" {
		t.Error("cacheForVariant changed its input")
	}
	if one := cacheForVariant(in, "linux", false); one[0].Attrs["ref"] != "reg:5000/app:cache" {
		t.Errorf("single variant ref = %q", one[0].Attrs["ref"])
	}
}
