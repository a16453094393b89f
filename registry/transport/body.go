package transport

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// MaxManifestSize is the largest manifest or index imgctl reads, the limit
// containerd and most registries apply.
const MaxManifestSize = 4 << 20

// maxBufferedBlob is the largest blob read whole (configs and attestation
// payloads); larger blobs stream and go-containerregistry checks them.
const maxBufferedBlob = 4 << 20

// readBody reads a successful GET of a manifest, or of a blob of known size
// up to maxBufferedBlob, into memory; it refuses a manifest over
// MaxManifestSize and checks content fetched by a sha256 digest. Other
// responses pass through.
func readBody(r *http.Request, resp *http.Response) (*http.Response, error) {
	kind, ref := classify(r.URL.Path)
	if r.Method != http.MethodGet || resp.StatusCode != http.StatusOK || kind == "" {
		return resp, nil
	}
	limit := int64(MaxManifestSize)
	if kind == "blobs" {
		if resp.ContentLength < 0 || resp.ContentLength > maxBufferedBlob {
			return resp, nil
		}
		limit = maxBufferedBlob
	}
	defer resp.Body.Close()
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%w: %d bytes, over the %d-byte limit", ErrManifestTooLarge, resp.ContentLength, limit)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading the response: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: over the %d-byte limit", ErrManifestTooLarge, limit)
	}
	if resp.ContentLength >= 0 && int64(len(b)) != resp.ContentLength {
		return nil, fmt.Errorf("reading the response: %d of %d bytes: %w", len(b), resp.ContentLength, io.ErrUnexpectedEOF)
	}
	if want := expectedDigest(kind, ref, resp); strings.HasPrefix(want, "sha256:") {
		sum := sha256.Sum256(b)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != want {
			return nil, &DigestMismatchError{URL: r.URL.Redacted(), Want: want, Got: got}
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	return resp, nil
}

// expectedDigest is the digest a response must hash to: the one in the
// path, or for a manifest fetched by tag the Docker-Content-Digest header
// (except for signed schema 1 manifests, whose header is not the hash of
// the bytes); "" when unknown.
func expectedDigest(kind, ref string, resp *http.Response) string {
	if strings.Contains(ref, ":") {
		return ref
	}
	if kind != "manifests" || strings.Contains(resp.Header.Get("Content-Type"), "prettyjws") {
		return ""
	}
	return resp.Header.Get("Docker-Content-Digest")
}

// classify returns "manifests" or "blobs" and the reference of a registry
// API path, or "" for anything else (uploads, tags, referrers).
func classify(path string) (kind, ref string) {
	rest, ok := strings.CutPrefix(path, "/v2/")
	if !ok {
		return "", ""
	}
	for _, k := range []string{"manifests", "blobs"} {
		if i := strings.LastIndex(rest, "/"+k+"/"); i > 0 {
			ref = rest[i+len(k)+2:]
			if ref == "" || strings.Contains(ref, "/") {
				return "", ""
			}
			return k, ref
		}
	}
	return "", ""
}
