package rawmanifest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestRewriteAttestation: in BuildKit's layout the layer gets the new
// statement's digest, size and uncompressed annotation, the config's
// diff_ids name it, and the rest keeps its bytes; an OCI artifact keeps
// its empty config and its subject names the new image.
func TestRewriteAttestation(t *testing.T) {
	stmt := []byte(`{"_type":"https://in-toto.io/Statement/v0.1","subject":[{"digest":{"sha256":"new"}}]}`)
	sh, size, _ := v1.SHA256(bytes.NewReader(stmt))
	manifest := `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",` +
		`"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"` + hash("c").String() + `","size":10},` +
		`"layers":[{"mediaType":"application/vnd.in-toto+json","digest":"` + hash("1").String() + `","size":5,` +
		`"annotations":{"containerd.io/uncompressed":"` + hash("1").String() + `","in-toto.io/predicate-type":"https://slsa.dev/provenance/v0.2"}}]}`
	config := `{"architecture":"unknown","os":"unknown","config":{},"rootfs":{"type":"layers","diff_ids":["` + hash("1").String() + `"]}}`
	at, err := RewriteAttestation([]byte(manifest), []byte(config), [][]byte{stmt}, v1.Descriptor{Digest: hash("9"), Size: 3})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.ReplaceAll(config, hash("1").String(), sh.String()); string(at.Config) != want {
		t.Errorf("config\n%s\nwant\n%s", at.Config, want)
	}
	var m v1.Manifest
	if err := json.Unmarshal(at.Manifest, &m); err != nil {
		t.Fatal(err)
	}
	ch, csize, _ := v1.SHA256(bytes.NewReader(at.Config))
	l := m.Layers[0]
	if l.Digest != sh || l.Size != size || l.Annotations["containerd.io/uncompressed"] != sh.String() ||
		l.Annotations["in-toto.io/predicate-type"] != "https://slsa.dev/provenance/v0.2" || m.Config.Digest != ch || m.Config.Size != csize {
		t.Errorf("manifest %s", at.Manifest)
	}

	artifact := `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","artifactType":"application/vnd.in-toto+json",` +
		`"config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2},` +
		`"layers":[{"mediaType":"application/vnd.in-toto+json","digest":"` + hash("1").String() + `","size":5}],` +
		`"subject":{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"` + hash("2").String() + `","size":7}}`
	at, err = RewriteAttestation([]byte(artifact), nil, [][]byte{stmt}, v1.Descriptor{Digest: hash("9"), Size: 3})
	if err != nil {
		t.Fatal(err)
	}
	m = v1.Manifest{}
	if err := json.Unmarshal(at.Manifest, &m); err != nil {
		t.Fatal(err)
	}
	if at.Config != nil || m.Subject == nil || m.Subject.Digest != hash("9") || m.Subject.Size != 3 || !strings.Contains(string(at.Manifest), `"artifactType":"application/vnd.in-toto+json"`) {
		t.Errorf("artifact %s", at.Manifest)
	}
	if _, err := RewriteAttestation([]byte(manifest), []byte(config), nil, v1.Descriptor{}); err == nil {
		t.Error("no statement for the one layer: no error")
	}
}
