package build

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/index"
)

func TestMetadata(t *testing.T) {
	tag, err := name.NewTag("reg.example.com/hello:1")
	if err != nil {
		t.Fatal(err)
	}
	sha, err := name.NewTag("reg.example.com/hello:sha-abc123")
	if err != nil {
		t.Fatal(err)
	}
	h := func(s string) v1.Hash { return v1.Hash{Algorithm: "sha256", Hex: s} }
	res := &Result{
		Index: &index.Result{Plan: &index.Plan{Digest: h("aa")}, Tag: tag, Tags: []name.Tag{tag, sha}},
		Platforms: []PlatformResult{
			{Platform: v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}, Digest: h("01"), Base: &ResolvedBase{Name: "reg/d:1", Digest: h("b1")}},
			{Platform: v1.Platform{OS: "windows", Architecture: "amd64", OSVersion: "10.0.26100.1"}, Digest: h("02"), Base: &ResolvedBase{Name: "reg/n:2025", Digest: h("b2")}},
			{Platform: v1.Platform{OS: "linux", Architecture: "amd64"}, Digest: h("03")},
		},
	}
	path := filepath.Join(t.TempDir(), "m.json")
	if err := WriteMetadata(path, res.Metadata()); err != nil {
		t.Fatal(err)
	}
	dt, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(dt, &got); err != nil {
		t.Fatal(err)
	}
	want := `{"index":{"digest":"sha256:aa","ref":"reg.example.com/hello:1","tags":["reg.example.com/hello:1","reg.example.com/hello:sha-abc123"]},"platforms":[` +
		`{"base":{"digest":"sha256:b1","name":"reg/d:1"},"digest":"sha256:01","platform":"linux/arm64/v8"},` +
		`{"base":{"digest":"sha256:b2","name":"reg/n:2025"},"digest":"sha256:02","os.version":"10.0.26100.1","platform":"windows/amd64"},` +
		`{"digest":"sha256:03","platform":"linux/amd64"}]}`
	if canon, _ := json.Marshal(got); string(canon) != want {
		t.Errorf("metadata =\n%s\nwant\n%s", canon, want)
	}
}
