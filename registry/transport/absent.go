package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	gtransport "github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// absentCodes are the error codes with which registries say that a manifest
// or blob does not exist: the distribution spec's MANIFEST_UNKNOWN and
// BLOB_UNKNOWN, and Harbor's NOT_FOUND (goharbor/harbor src/lib/errors,
// NotFoundCode, which Harbor v2 answers for an artifact it does not have).
var absentCodes = []gtransport.ErrorCode{
	gtransport.ManifestUnknownErrorCode, gtransport.BlobUnknownErrorCode, "NOT_FOUND",
}

// maxErrorBody bounds how much of an error response is read to judge it,
// as go-containerregistry's gtransport.CheckError does.
const maxErrorBody = 64 << 10

// notFound judges a 404 to a manifest or blob request (GET or HEAD): it
// returns nil when the answer is the registry's "unknown", which every
// caller then takes for "absent" (Client.Head returns nil, cosign reads no
// signatures, CopyArtifacts skips a tag), and an ErrUnexpectedNotFound
// error when it is not, so that no caller takes it for absent. Other
// responses pass.
//
// The rule, decided here once for every reader (imgctl's own and
// go-containerregistry's and cosign's, which share the transport):
//   - An HTML 404 (Content-Type text/html) is a proxy's, a load balancer's
//     or a web server's page, not a registry's answer: the request never
//     reached the registry's API, and "absent" would let a publish skip its
//     tag rule or a promote skip a signature tag.
//   - A GET carries a body. Its 404 is absent when the body is empty or
//     names MANIFEST_UNKNOWN, BLOB_UNKNOWN or Harbor's NOT_FOUND. Any other
//     body is not: NAME_UNKNOWN says the repository is unknown, which
//     imgctl never asks about a repository it has not just read from or
//     written to (sources, signature tags, referrers fallback tags), so it
//     means the request reached something else; a plain-text page is a
//     router's "404 page not found".
//   - A HEAD has no body, so a HEAD 404 cannot say which of these it is
//     (distribution answers MANIFEST_UNKNOWN, ECR NAME_UNKNOWN for a
//     repository that does not exist yet): it is absent unless it is HTML.
//     This is the tag check before a publish, where an unknown repository
//     is the usual case and the PUT that follows fails on its own if the
//     repository cannot be created.
//
// The referrers API (/v2/<name>/referrers/<digest>) is not judged here: any
// 404 there means the registry does not serve the API, and readers fall
// back to the sha256-<digest> tag, whose own 404 is judged like any tag's.
func notFound(r *http.Request, resp *http.Response) error {
	if resp.StatusCode != http.StatusNotFound {
		return nil
	}
	if kind, _ := classify(r.URL.Path); kind == "" {
		return nil
	}
	fail := func(why string) error {
		resp.Body.Close()
		return fmt.Errorf("%s %s: %w: %s", r.Method, r.URL.Redacted(), ErrUnexpectedNotFound, why)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" {
		return fail("an HTML page, not a registry's answer (a proxy in the way?)")
	}
	if r.Method != http.MethodGet {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("%s %s: reading the response: %w", r.Method, r.URL.Redacted(), err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	var e gtransport.Error
	if json.Unmarshal(b, &e) != nil || len(e.Errors) == 0 {
		return fail(fmt.Sprintf("not a registry error: %q", truncate(string(b), 120)))
	}
	codes := make([]string, 0, len(e.Errors))
	for _, d := range e.Errors {
		for _, c := range absentCodes {
			if strings.EqualFold(string(d.Code), string(c)) {
				return nil
			}
		}
		codes = append(codes, d.String())
	}
	return fail(strings.Join(codes, "; "))
}

// truncate shortens s to n bytes for a message.
func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
