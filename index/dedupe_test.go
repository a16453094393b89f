package index

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/imgctl/imgctl/internal/testing/regtest"
)

// TestDuplicateWindowsBuild refuses two variants of one Windows build, and
// with PreferNewest keeps the greater revision and drops the attestation of
// the other.
func TestDuplicateWindowsBuild(t *testing.T) {
	reg := regtest.New(t)
	old := regtest.Must(regtest.WindowsImage("10.0.20348.9999"))(t)
	cur := regtest.Must(regtest.WindowsImage("10.0.20348.33674"))(t)
	oldIdx := regtest.Must(regtest.Index(regtest.Entry{Image: old}, regtest.Must(regtest.AttestationEntry(old))(t)))(t)
	srcs := []name.Reference{pushed(t, reg, "src:cur", cur), pushed(t, reg, "src:old", oldIdx)}
	target := tag(t, reg, "app:1")
	_, err := Create(ctx, target, srcs, testOptions())
	if !errors.Is(err, ErrDuplicatePlatform) || !strings.Contains(err.Error(), "windows/amd64@20348") {
		t.Fatalf("got %v, want ErrDuplicatePlatform naming windows/amd64@20348", err)
	}
	if tagExists(t, target) {
		t.Fatal("refused merge pushed the tag")
	}
	o := testOptions()
	o.Prefer = PreferNewest
	res, err := Create(ctx, target, srcs, o)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := fetchIndex(t, target)
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != digest(t, cur) {
		t.Errorf("kept %v, want only %s", platforms(im), digest(t, cur))
	}
	if len(res.Notes) != 2 || !strings.Contains(res.Notes[1], "attestation") {
		t.Errorf("notes %q: want the dropped variant and its attestation", res.Notes)
	}
}

// TestDuplicateLinux keeps the later config created, then the later source.
func TestDuplicateLinux(t *testing.T) {
	reg := regtest.New(t)
	a := regtest.Must(regtest.LinuxImage("amd64", regtest.WithSeed("a")))(t)
	b := regtest.Must(regtest.LinuxImage("amd64", regtest.WithSeed("b")))(t)
	newer := regtest.Must(mutate.CreatedAt(a, v1.Time{Time: regtest.FixtureTime.Add(time.Hour)}))(t)
	// b is also wrapped in an index with a descriptor platform, so its
	// config is read only to break the tie.
	bIdx := regtest.Must(regtest.Index(regtest.Entry{Image: b}))(t)
	o := testOptions()
	o.Prefer = PreferNewest
	for _, tc := range []struct {
		name string
		srcs []any
		want v1.Image
	}{
		{"created wins", []any{newer, bIdx}, newer},
		{"created wins in any order", []any{bIdx, newer}, newer},
		{"later source on a tie", []any{a, bIdx}, b},
		{"later source on a tie reversed", []any{bIdx, a}, a},
	} {
		var refs []name.Reference
		for i, x := range tc.srcs {
			refs = append(refs, pushed(t, reg, "src:"+string(rune('a'+i))+strings.ReplaceAll(tc.name, " ", "-"), x))
		}
		o.DryRun = true
		res, err := Create(ctx, tag(t, reg, "app:x"), refs, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Manifest.Manifests; len(got) != 1 || got[0].Digest != digest(t, tc.want) {
			t.Errorf("%s: kept %v, want %s", tc.name, got, digest(t, tc.want))
		}
	}
}

// TestSameManifestTwice keeps one copy without complaint.
func TestSameManifestTwice(t *testing.T) {
	reg := regtest.New(t)
	img := regtest.Must(regtest.WindowsImage(regtest.OSVersionLTSC2025))(t)
	idx := regtest.Must(regtest.Index(regtest.Entry{Image: img}, regtest.Must(regtest.AttestationEntry(img))(t)))(t)
	srcs := []name.Reference{pushed(t, reg, "src:img", img), pushed(t, reg, "src:idx", idx), pushed(t, reg, "src:idx2", idx)}
	o := testOptions()
	o.DryRun = true
	res, err := Create(ctx, tag(t, reg, "app:1"), srcs, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := platforms(res.Manifest); !slices.Equal(got, []string{"windows/amd64:" + regtest.OSVersionLTSC2025, "attestation"}) {
		t.Errorf("platforms %v", got)
	}
}
