package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/imgctl/imgctl/internal/testing/regtest"
	"github.com/imgctl/imgctl/platform"
)

// run executes a fresh root command and returns stdout, stderr and the exit
// code, as main would.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Execute(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// jsonReport is the verify -o json contract, decoded strictly so that a
// renamed field fails the test.
type jsonReport struct {
	Ref      string `json:"ref"`
	Digest   string `json:"digest"`
	Passed   *bool  `json:"passed"`
	Findings []struct {
		Rule, Severity, Digest, Platform, Message string
	} `json:"findings"`
	Targets []struct {
		Target    string `json:"target"`
		Build     uint32 `json:"build"`
		Engine    string `json:"engine"`
		Releases  string `json:"releases"`
		Selected  string `json:"selected"`
		OSVersion string `json:"os_version"`
	} `json:"targets"`
	Layers *struct {
		Read  int   `json:"read"`
		Bytes int64 `json:"bytes"`
	} `json:"layers"`
	Signatures *struct {
		Scope   string   `json:"scope"`
		Digests []string `json:"digests"`
	} `json:"signatures"`
}

func decodeReport(t *testing.T, s string) jsonReport {
	t.Helper()
	var r jsonReport
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("decoding verify JSON: %v\n%s", err, s)
	}
	if r.Passed == nil || r.Ref == "" || !strings.HasPrefix(r.Digest, "sha256:") || r.Findings == nil || r.Targets == nil {
		t.Fatalf("verify JSON misses contract fields: %s", s)
	}
	return r
}

func (r jsonReport) severity(rule string) string {
	for _, f := range r.Findings {
		if f.Rule == rule {
			return f.Severity
		}
	}
	return ""
}

func must[T any](t *testing.T, v T, err error) T {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func winP(v string) *platform.Platform {
	return &platform.Platform{OS: "windows", Architecture: "amd64", OSVersion: v}
}

// registryHost is a test registry fixtures push to: regtest's in-process
// one or disttest's CNCF distribution registry.
type registryHost interface {
	Host() string
	PushTag(s string, x any, opts ...remote.Option) (name.Reference, v1.Hash, error)
}

func push(t *testing.T, reg registryHost, tag string, x any) string {
	t.Helper()
	ref, _, err := reg.PushTag(tag, x)
	if err != nil {
		t.Fatal(err)
	}
	return ref.String()
}

func index(t *testing.T, entries ...regtest.Entry) v1.ImageIndex {
	t.Helper()
	idx, err := regtest.Index(entries...)
	return must(t, idx, err)
}

func attEntry(t *testing.T, i v1.Image) regtest.Entry {
	t.Helper()
	e, err := regtest.AttestationEntry(i)
	return must(t, e, err)
}

func digestOf(t *testing.T, i v1.Image) string {
	t.Helper()
	d, err := i.Digest()
	return must(t, d, err).String()
}
