package policy

import (
	"context"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/snapshot"
)

func TestBases(t *testing.T) {
	t.Parallel()
	bases, err := ParseBases([]string{"mcr.microsoft.com/windows/*", "alpine", "gcr.io/*"})
	if err != nil {
		t.Fatal(err)
	}
	img := func(seed string, ann map[string]string) v1.Image {
		return regtest.Must(regtest.LinuxImage("amd64", regtest.WithSeed(seed), regtest.WithAnnotations(ann)))(t)
	}
	for _, tc := range []struct {
		name      string
		manifest  string // base annotation on the manifest
		desc      string // base annotation on the index descriptor
		rule, sev string
	}{
		{"prefix", "mcr.microsoft.com/windows/nanoserver:ltsc2022", "", "", ""},
		{"prefix with digest", "mcr.microsoft.com/windows/servercore:ltsc2025@sha256:" + zeros, "", "", ""},
		{"short docker hub name", "docker.io/library/alpine:3.20", "", "", ""},
		{"registry prefix", "", "gcr.io/distroless/static:nonroot", "", ""},
		{"prefix is not the repository", "mcr.microsoft.com/windows:ltsc2022", "", RuleBaseNotAllowed, "error"},
		{"other repository", "docker.io/library/ubuntu:24.04", "", RuleBaseNotAllowed, "error"},
		{"descriptor disagrees", "alpine:3.20", "evil.example.com/alpine:3.20", RuleBaseNotAllowed, "error"},
		{"unparsable", "::", "", RuleBaseNotAllowed, "error"},
		{"no annotation", "", "", RuleMissingBaseAnnotation, "warning"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ann := map[string]string{}
			if tc.manifest != "" {
				ann[snapshot.AnnotationBaseName] = tc.manifest
			}
			e := regtest.Entry{Image: img(tc.name, ann)}
			if tc.desc != "" {
				e.Annotations = map[string]string{snapshot.AnnotationBaseName: tc.desc}
			}
			att := regtest.Must(regtest.AttestationEntry(e.Image))(t)
			idx := regtest.Must(regtest.Index(e, att))(t)
			s, err := snapshot.LoadIndex(context.Background(), idx, 0)
			if err != nil {
				t.Fatal(err)
			}
			fs := bases.Check(s)
			if tc.rule == "" {
				if len(fs) != 0 {
					t.Fatalf("findings %v, want none", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Rule != tc.rule || string(fs[0].Severity) != tc.sev || fs[0].Platform != "linux/amd64" {
				t.Fatalf("findings %+v, want one %s %s on linux/amd64", fs, tc.sev, tc.rule)
			}
		})
	}
	if fs := (Bases{}).Check(&snapshot.Snapshot{}); fs != nil {
		t.Fatalf("no patterns: %v", fs)
	}
}

const zeros = "0000000000000000000000000000000000000000000000000000000000000000"
