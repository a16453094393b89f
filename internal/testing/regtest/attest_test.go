package regtest

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/imgctl/imgctl/snapshot"
)

func TestAttestationEntry(t *testing.T) {
	subj := Must(LinuxImage("amd64"))(t)
	e := Must(AttestationEntry(subj))(t)
	if e.Platform == nil || !e.Platform.Equals(AttestationPlatform) {
		t.Fatalf("platform %+v", e.Platform)
	}
	if got := e.Annotations[snapshot.AnnotationReferenceType]; got != snapshot.AttestationManifest {
		t.Fatalf("%s = %q", snapshot.AnnotationReferenceType, got)
	}
	if got, want := e.Annotations[snapshot.AnnotationReferenceDigest], digestOf(t, subj).String(); got != want {
		t.Fatalf("%s = %q, want %q", snapshot.AnnotationReferenceDigest, got, want)
	}

	m, err := e.Image.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != InTotoMediaType ||
		m.Layers[0].Annotations[AnnotationPredicateType] != SLSAProvenanceV02 {
		t.Fatalf("layers %+v", m.Layers)
	}
	cf, err := e.Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "unknown" || cf.Architecture != "unknown" {
		t.Fatalf("config platform %s/%s", cf.OS, cf.Architecture)
	}
	layers, err := e.Image.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	var st statement
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Subject) != 1 || st.Subject[0].Digest["sha256"] != digestOf(t, subj).Hex {
		t.Fatalf("statement subject %+v", st.Subject)
	}

	// The attestation survives a push.
	r := New(t)
	MustPush(t, r.MustRef(t, "att:1"), Must(Index(Entry{Image: subj}, e))(t))
}
