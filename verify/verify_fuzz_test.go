package verify

import (
	"bytes"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/imgctl/imgctl/platform"
	"github.com/imgctl/imgctl/snapshot"
)

// FuzzEvaluate: an index decoded from arbitrary bytes, with each image
// entry given a config that claims the descriptor's platform, never makes
// Evaluate panic, with default options or with targets and requirements.
func FuzzEvaluate(f *testing.F) {
	for _, s := range []string{
		`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`,
		`{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":1,"platform":{"os":"windows","architecture":"amd64","os.version":"10.0.26100.1"}}]}`,
		`{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":-1,"platform":{"os":"windows","architecture":"amd64","os.version":"10.0.abc"}},{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:1111111111111111111111111111111111111111111111111111111111111111","size":1}]}`,
		`{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:2222222222222222222222222222222222222222222222222222222222222222","size":1,"platform":{"os":"unknown","architecture":"unknown"},"annotations":{"vnd.docker.reference.type":"attestation-manifest","vnd.docker.reference.digest":"sha256:x"}}]}`,
		`{"manifests":[{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"sha256:3333333333333333333333333333333333333333333333333333333333333333","size":1}]}`,
		`{"manifests":[{"digest":"md5:00"}]}`,
		`{"manifests":[`,
	} {
		f.Add([]byte(s))
	}
	targets, _ := platform.ParseTargets([]string{"ltsc2019", "ltsc2022", "ltsc2025"})
	require, _ := platform.ParseList([]string{"linux/amd64,windows/amd64:10.0.26100"})
	f.Fuzz(func(t *testing.T, b []byte) {
		im, err := v1.ParseIndexManifest(bytes.NewReader(b))
		if err != nil {
			return
		}
		s := &snapshot.Snapshot{Index: im, Entries: make([]snapshot.Entry, len(im.Manifests))}
		for i, d := range im.Manifests {
			s.Entries[i].Descriptor = d
			if d.MediaType.IsImage() && i%3 != 2 {
				cfg := &v1.ConfigFile{}
				if d.Platform != nil && i%3 == 0 {
					cfg.OS, cfg.Architecture, cfg.OSVersion = d.Platform.OS, d.Platform.Architecture, d.Platform.OSVersion
					cfg.Variant, cfg.OSFeatures = d.Platform.Variant, d.Platform.OSFeatures
				}
				s.Entries[i].Manifest, s.Entries[i].Config = &v1.Manifest{Layers: []v1.Descriptor{{MediaType: d.MediaType, URLs: d.URLs}}}, cfg
			}
		}
		for _, o := range []Options{{}, {Targets: targets, RequirePlatforms: require, HostProcess: true, RunAsNonRoot: true}} {
			r := Evaluate("fuzz", s, o)
			if r == nil || r.Passed != (len(r.Errors()) == 0) {
				t.Fatalf("report %+v", r)
			}
		}
	})
}
