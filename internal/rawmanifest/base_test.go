package rawmanifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func hash(c string) v1.Hash { return v1.Hash{Algorithm: "sha256", Hex: strings.Repeat(c, 64)} }

// TestReplaceBase moves an OCI image with two old-base layers and one own
// layer onto a one-layer Docker base: the base descriptor gets the OCI
// type and keeps its bytes otherwise, the image's own descriptor and
// every field neither struct knows keep theirs and their place, diff_ids
// and history are the new base's then the image's own, os.version and
// os.features are the base's, the config descriptor names the new config
// and the annotations are replaced.
func TestReplaceBase(t *testing.T) {
	manifest := `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",` +
		`"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:` + strings.Repeat("c", 64) + `","size":7,"x-keep":1},` +
		`"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"` + hash("1").String() + `","size":1},` +
		`{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"` + hash("2").String() + `","size":2},` +
		`{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"` + hash("3").String() + `","size":3,"annotations":{"a":"&&"}}],` +
		`"annotations":{"old":"1"},"x-tool":"keep"}`
	config := `{"architecture":"amd64","os":"windows","os.version":"10.0.20348.1","moby.buildkit.buildinfo.v1":"e30=",` +
		`"rootfs":{"type":"layers","diff_ids":["` + hash("a").String() + `","` + hash("b").String() + `","` + hash("d").String() + `"]},` +
		`"history":[{"created_by":"base 1"},{"created_by":"base 2"},{"created_by":"COPY app.exe && echo"}]}`
	baseLayer := json.RawMessage(`{"mediaType":"application/vnd.docker.image.rootfs.foreign.diff.tar.gzip","size":9,"digest":"` + hash("9").String() + `","urls":["https://example.com/l"]}`)
	b := Base{
		Layers: []json.RawMessage{baseLayer}, DiffIDs: []v1.Hash{hash("e")},
		History: []json.RawMessage{json.RawMessage(`{"created_by":"new base"}`)},
		OS:      &OSFields{Version: "10.0.26100.2", Features: []string{"win32k"}},
	}
	ed, err := ReplaceBase([]byte(manifest), []byte(config), "", Replaced{Layers: 2, History: 2}, b, map[string]string{"new": "2"})
	if err != nil {
		t.Fatal(err)
	}
	wantConfig := `{"architecture":"amd64","os":"windows","os.version":"10.0.26100.2","moby.buildkit.buildinfo.v1":"e30=",` +
		`"rootfs":{"type":"layers","diff_ids":["` + hash("e").String() + `","` + hash("d").String() + `"]},` +
		`"history":[{"created_by":"new base"},{"created_by":"COPY app.exe && echo"}],"os.features":["win32k"]}`
	if string(ed.Config) != wantConfig {
		t.Errorf("config\n%s\nwant\n%s", ed.Config, wantConfig)
	}
	ch, size, _ := v1.SHA256(bytes.NewReader(ed.Config))
	wantManifest := `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",` +
		`"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"` + ch.String() + `","size":` + itoa(size) + `,"x-keep":1},` +
		`"layers":[{"mediaType":"application/vnd.oci.image.layer.nondistributable.v1.tar+gzip","size":9,"digest":"` + hash("9").String() + `","urls":["https://example.com/l"]},` +
		`{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"` + hash("3").String() + `","size":3,"annotations":{"a":"&&"}}],` +
		`"annotations":{"new":"2"},"x-tool":"keep"}`
	if string(ed.Manifest) != wantManifest {
		t.Errorf("manifest\n%s\nwant\n%s", ed.Manifest, wantManifest)
	}

	// Without History and OS, and annotations nil, those stay as they were.
	ed, err = ReplaceBase([]byte(manifest), []byte(config), "", Replaced{Layers: 2}, Base{Layers: b.Layers, DiffIDs: b.DiffIDs}, nil)
	if err != nil || !strings.Contains(string(ed.Config), `"os.version":"10.0.20348.1"`) || !strings.Contains(string(ed.Config), `{"created_by":"base 1"}`) ||
		!strings.Contains(string(ed.Manifest), `"annotations":{"old":"1"}`) {
		t.Errorf("kept fields changed: %v\n%s\n%s", err, ed.Config, ed.Manifest)
	}
	// A base OS without os.features removes the image's.
	withFeatures := strings.Replace(config, `"os":"windows",`, `"os":"windows","os.features":["x"],`, 1)
	if ed, err := ReplaceBase([]byte(manifest), []byte(withFeatures), "", Replaced{Layers: 2}, Base{Layers: b.Layers, DiffIDs: b.DiffIDs, OS: &OSFields{Version: "10.0.26100.2"}}, nil); err != nil || strings.Contains(string(ed.Config), "os.features") {
		t.Errorf("os.features kept: %v %s", err, ed.Config)
	}
}

// TestReplaceBaseRefuses: a base layer with no equivalent in the image's
// family, an index, and fewer layers than the old base are refused.
func TestReplaceBaseRefuses(t *testing.T) {
	docker := `{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json","config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"` + hash("c").String() + `","size":1},"layers":[{"mediaType":"application/vnd.docker.image.rootfs.diff.tar.gzip","digest":"` + hash("1").String() + `","size":1}]}`
	config := `{"rootfs":{"type":"layers","diff_ids":["` + hash("a").String() + `"]}}`
	zstd := Base{Layers: []json.RawMessage{json.RawMessage(`{"mediaType":"` + string(types.OCILayerZStd) + `","digest":"` + hash("9").String() + `","size":1}`)}, DiffIDs: []v1.Hash{hash("e")}}
	if _, err := ReplaceBase([]byte(docker), []byte(config), "", Replaced{Layers: 1}, zstd, nil); !errors.Is(err, ErrMediaType) {
		t.Errorf("zstd layer into a Docker manifest: %v, want ErrMediaType", err)
	}
	noType := strings.Replace(docker, `"mediaType":"application/vnd.docker.distribution.manifest.v2+json",`, "", 1)
	if _, err := ReplaceBase([]byte(noType), []byte(config), types.OCIImageIndex, Replaced{Layers: 1}, Base{}, nil); !errors.Is(err, ErrMediaType) {
		t.Errorf("an index: %v, want ErrMediaType", err)
	}
	if _, err := ReplaceBase([]byte(docker), []byte(config), "", Replaced{Layers: 2}, Base{}, nil); err == nil {
		t.Error("replacing 2 layers of a 1-layer image: no error")
	}
	if _, err := ReplaceBase([]byte(docker), []byte(config), "", Replaced{Layers: 1}, Base{Layers: zstd.Layers}, nil); err == nil {
		t.Error("a base with layers and no diff_ids: no error")
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
