package cli

import (
	"errors"
	"maps"
	"testing"

	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/session/secrets/secretsprovider"

	"github.com/imgctl/imgctl/build"
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
		got, err := parseSecret(in)
		if err != nil || got != want {
			t.Errorf("parseSecret(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"src=/x", "id=a,bogus=1", "id=a,type=tmpfs", "justaword"} {
		if _, err := parseSecret(in); !errors.Is(err, build.ErrInvalidOptions) {
			t.Errorf("parseSecret(%q) = %v, want ErrInvalidOptions", in, err)
		}
	}
}

func TestParseSSH(t *testing.T) {
	c, err := parseSSH("default")
	if err != nil || c.ID != "default" || c.Paths != nil {
		t.Errorf("default = %+v %v", c, err)
	}
	c, err = parseSSH("gh=/a.sock,/b.pem")
	if err != nil || c.ID != "gh" || len(c.Paths) != 2 || c.Paths[1] != "/b.pem" {
		t.Errorf("gh = %+v %v", c, err)
	}
	if _, err := parseSSH("=x"); !errors.Is(err, build.ErrInvalidOptions) {
		t.Errorf("=x: %v", err)
	}
}

func TestParseCache(t *testing.T) {
	for in, want := range map[string]client.CacheOptionsEntry{
		"type=registry,ref=reg/app:cache,mode=max": {Type: "registry", Attrs: map[string]string{"ref": "reg/app:cache", "mode": "max"}},
		"reg/app:cache":             {Type: "registry", Attrs: map[string]string{"ref": "reg/app:cache"}},
		"type=local,src=/tmp/cache": {Type: "local", Attrs: map[string]string{"src": "/tmp/cache"}},
	} {
		got, err := parseCache(in)
		if err != nil || got.Type != want.Type || !maps.Equal(got.Attrs, want.Attrs) {
			t.Errorf("parseCache(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"ref=x", "type=registry,=x", "type=registry,novalue"} {
		if _, err := parseCache(in); !errors.Is(err, build.ErrInvalidOptions) {
			t.Errorf("parseCache(%q) = %v, want ErrInvalidOptions", in, err)
		}
	}
}
