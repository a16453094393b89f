// Package rawmanifest edits manifests and configs as JSON, not by
// re-serialising go-containerregistry's structs: only the fields a caller
// changes are rewritten, and every other field, known to those structs or
// not (BuildKit's moby.buildkit.buildinfo.v1 in a config, a layer
// descriptor's annotations), keeps its bytes and its position. It also
// converts layer media types between the Docker and OCI families, which
// changes a descriptor and never a blob.
//
// It is imgctl's manifest-editing layer, in the spirit of
// go-containerregistry's mutate but on exact bytes, and it does no I/O:
// ReplaceBase moves an image onto another base (layers, diff_ids,
// history, os.version, media types moved between the Docker and OCI
// families); RewriteAttestation points an attestation manifest at new
// statements and a new subject. rebase (moving variants onto new bases)
// and build's graft (putting a Windows stage's layers onto the real base)
// only read and write around these: both rewrite manifests that BuildKit
// or another tool wrote, so a re-serialisation there would change digests
// for no reason (map keys sorted, "&&" escaped as \u0026\u0026) and drop
// what the structs do not know.
package rawmanifest
