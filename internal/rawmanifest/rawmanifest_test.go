package rawmanifest

import (
	"encoding/json"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/types"
)

func TestLayerMediaType(t *testing.T) {
	for _, tc := range []struct {
		layer, manifest, want types.MediaType
	}{
		{types.DockerLayer, types.OCIManifestSchema1, types.OCILayer},
		{types.DockerForeignLayer, types.OCIManifestSchema1, types.OCIRestrictedLayer},
		{types.DockerUncompressedLayer, types.OCIManifestSchema1, types.OCIUncompressedLayer},
		{types.OCILayerZStd, types.OCIManifestSchema1, types.OCILayerZStd},
		{types.OCILayer, types.DockerManifestSchema2, types.DockerLayer},
		{types.OCIRestrictedLayer, types.DockerManifestSchema2, types.DockerForeignLayer},
		{types.DockerLayer, types.DockerManifestSchema2, types.DockerLayer},
		{types.OCILayerZStd, types.DockerManifestSchema2, ""},
		{"application/x-unknown", types.OCIManifestSchema1, ""},
	} {
		got, ok := LayerMediaType(tc.layer, tc.manifest)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s in %s: got %q, %v; want %q", tc.layer, tc.manifest, got, ok, tc.want)
		}
	}
}

// TestReplaceKeys keeps unknown fields, their order and their bytes
// (no HTML escaping), replaces in place, deletes nil values and appends
// new keys in the order given.
func TestReplaceKeys(t *testing.T) {
	in := `{"architecture":"amd64","moby.buildkit.buildinfo.v1":"e30=","history":[{"created_by":"RUN a && b"}],"os":"windows","os.version":"10.0.1.1","rootfs":{}}`
	out, err := ReplaceKeys([]byte(in), map[string]json.RawMessage{
		"os.version": nil, "rootfs": json.RawMessage(`{"type": "layers"}`), "os.features": json.RawMessage(`["win32k"]`),
	}, "os.features")
	want := `{"architecture":"amd64","moby.buildkit.buildinfo.v1":"e30=","history":[{"created_by":"RUN a && b"}],"os":"windows","rootfs":{"type":"layers"},"os.features":["win32k"]}`
	if err != nil || string(out) != want {
		t.Errorf("got %s (%v)\nwant %s", out, err, want)
	}
	if _, err := ReplaceKeys([]byte(`[1]`), nil); err == nil {
		t.Error("an array was accepted")
	}
}

// TestSet encodes the values without HTML escaping, in place, and appends
// a new key where order says.
func TestSet(t *testing.T) {
	in := `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"digest":"sha256:1"},"layers":[],"annotations":{"a":"b"}}`
	out, err := Set([]byte(in), map[string]any{
		"config":  map[string]string{"digest": "sha256:2"},
		"subject": map[string]string{"note": "a && b"},
	}, "subject")
	want := `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"digest":"sha256:2"},"layers":[],"annotations":{"a":"b"},"subject":{"note":"a && b"}}`
	if err != nil || string(out) != want {
		t.Errorf("got %s (%v)\nwant %s", out, err, want)
	}
	if _, err := Set([]byte(in), map[string]any{"x": func() {}}); err == nil {
		t.Error("a value JSON cannot encode was accepted")
	}
}
