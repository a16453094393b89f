package cli

import (
	"errors"
	"maps"
	"strings"
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

func TestParseProvenance(t *testing.T) {
	for in, want := range map[string]*build.Provenance{
		"mode=min":                {Mode: build.ProvenanceMin},
		"mode=max":                {Mode: build.ProvenanceMax},
		"min":                     {Mode: build.ProvenanceMin},
		"max":                     {Mode: build.ProvenanceMax},
		"true":                    {Mode: build.ProvenanceMax}, // buildx: no mode, BuildKit's default
		"1":                       {Mode: build.ProvenanceMax},
		"false":                   nil,
		"0":                       nil,
		"disabled=true":           nil,
		"mode=max,disabled=false": {Mode: build.ProvenanceMax},
		"mode=max,builder-id=https://ci.example.com/run/1": {Mode: build.ProvenanceMax, BuilderID: "https://ci.example.com/run/1"},
		`"builder-id=https://ci.example.com/a,b"`:          {Mode: build.ProvenanceMax, BuilderID: "https://ci.example.com/a,b"},
		"mode=min,builder-id=https://ci.example.com/run/2": {Mode: build.ProvenanceMin, BuilderID: "https://ci.example.com/run/2"},
	} {
		got, err := parseProvenance(in)
		if err != nil || (got == nil) != (want == nil) || (got != nil && *got != *want) {
			t.Errorf("parseProvenance(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "full", "mode=full", "mode=", "mode=min,mode=max", "version=v1", "yes please", "disabled=maybe", `mode="min`} {
		if got, err := parseProvenance(in); !errors.Is(err, ErrUsage) {
			t.Errorf("parseProvenance(%q) = %+v, %v; want ErrUsage", in, got, err)
		}
	}
}

func TestParseSBOM(t *testing.T) {
	for in, want := range map[string]*build.SBOM{
		"":                          nil,
		"false":                     nil,
		"true":                      {},
		"generator=reg:5000/scan:1": {Generator: "reg:5000/scan:1"},
		"generator=reg:5000/scan@sha256:" + strings.Repeat("a", 64): {Generator: "reg:5000/scan@sha256:" + strings.Repeat("a", 64)},
		"generator=x/y,disabled=true":                               nil,
		"base=reference":                                            {BaseReference: true},
		"generator=x/y,base=reference":                              {Generator: "x/y", BaseReference: true},
		"base=scan":                                                 {},
	} {
		got, err := parseSBOM(in)
		if err != nil || (got == nil) != (want == nil) || (got != nil && *got != *want) {
			t.Errorf("parseSBOM(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"generator=", "generator=UPPER/Case", "scanner=x", "generator=a,generator=b", "nope", "base=files", "base="} {
		if got, err := parseSBOM(in); !errors.Is(err, ErrUsage) {
			t.Errorf("parseSBOM(%q) = %+v, %v; want ErrUsage", in, got, err)
		}
	}
}
