package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/imgctl/imgctl/build"
)

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
