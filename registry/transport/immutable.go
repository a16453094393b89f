package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	gtransport "github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// ImmutableTagError is a registry's refusal to change a tag it holds
// immutable or locked. It is ErrTagExists for errors.Is, the same error
// (and exit code) as imgctl's own tag rule: the tag cannot be written, and
// retrying will not change that.
type ImmutableTagError struct {
	// Tag is the tag refused, "registry/repository:tag".
	Tag string
	// Status, Code and Message are the registry's answer.
	Status  int
	Code    string
	Message string
}

// Error implements error.
func (e *ImmutableTagError) Error() string {
	return fmt.Sprintf("%s %s: the registry holds it immutable (%d %s: %s)", ErrTagExists, e.Tag, e.Status, e.Code, e.Message)
}

// Is makes errors.Is(err, ErrTagExists) true.
func (e *ImmutableTagError) Is(target error) bool { return target == ErrTagExists }

// immutableRule recognises one registry's refusal by its error code and a
// word of its message, never by the status alone: a 400 also means
// MANIFEST_INVALID or a missing blob, a 412 or a 405 other refusals.
type immutableRule struct {
	registry string
	codes    []string
	message  string // lower case, contained in the message
}

// immutableRules are the refusals of the registries that enforce tag
// immutability themselves, as they answer a manifest PUT to a protected
// tag:
//   - Amazon ECR, a repository (or, since the exclusion filters, a tag)
//     set IMMUTABLE: 400 with code TAG_INVALID and "The image tag '1.0'
//     already exists in the 'app' repository and cannot be overwritten
//     because the repository is immutable." (or "... because the tag is
//     immutable."), as seen in aws/containers-roadmap#862, moby/buildkit#3776
//     and osscontainertools/kaniko#204. A TAG_INVALID without "immutable"
//     is a malformed tag, not a refusal.
//   - Harbor, a tag immutability rule: 412 Precondition Failed with code
//     PRECONDITION and "Failed to process request due to 'app:1.0'
//     configured as immutable." (goharbor/harbor#9427 and #9837, the
//     immutable middleware's ErrImmutable sent with PreconditionCode;
//     earlier builds said "... is a immutable tag", goharbor/harbor#9718,
//     and the proposal's first draft used DENIED).
//   - Azure Container Registry, an image or repository locked with
//     `az acr repository update --write-enabled false`: code
//     REGISTRY_DISALLOWED_OPERATION, "The operation is disallowed on this
//     registry, repository or image." (a 405 in Azure/azure-sdk-for-net#22827
//     and Azure/acr-cli#70); older ACR answered a push with "The operation is
//     disallowed." under code UNKNOWN or DENIED (Azure/acr#84). ACR gives
//     the same answer for a locked repository, where no tag can be
//     written: for the caller it is the same, the tag cannot be written.
//
// Docker Hub's immutable tags answer 403 (docker/hub-feedback#2466) with a
// body not documented; it is not recognised, and its 403 stays a registry
// error (exit 2 as well).
var immutableRules = []immutableRule{
	{registry: "ECR", codes: []string{"TAG_INVALID"}, message: "immutable"},
	{registry: "Harbor", codes: []string{"PRECONDITION", "DENIED"}, message: "immutable"},
	{registry: "ACR", codes: []string{"REGISTRY_DISALLOWED_OPERATION"}, message: ""},
	{registry: "ACR", codes: []string{"UNKNOWN", "DENIED"}, message: "operation is disallowed"},
}

// immutableRefusal returns an ImmutableTagError when resp answers a PUT of
// a manifest by tag with a registry's immutability refusal, and nil
// otherwise (the response then passes, its body intact). Every tag write
// goes through the client's transport (Copier.Put, go-containerregistry's
// Pusher for signature tags, cosign's writes), so every one maps a refusal
// the same way.
func immutableRefusal(r *http.Request, resp *http.Response) error {
	if r.Method != http.MethodPut || resp.StatusCode < 400 || resp.StatusCode >= 500 ||
		resp.StatusCode == http.StatusUnauthorized {
		return nil
	}
	kind, ref := classify(r.URL.Path)
	if kind != "manifests" || strings.Contains(ref, ":") {
		return nil // a blob, or a manifest by digest: no tag
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return nil // gtransport.CheckError reports the status
	}
	var e gtransport.Error
	if json.Unmarshal(b, &e) != nil {
		return nil
	}
	for _, d := range e.Errors {
		msg := strings.ToLower(d.Message)
		for _, rule := range immutableRules {
			if slicesContainsFold(rule.codes, string(d.Code)) && strings.Contains(msg, rule.message) {
				repo := strings.TrimPrefix(r.URL.Path[:strings.LastIndex(r.URL.Path, "/manifests/")], "/v2/")
				return &ImmutableTagError{Tag: r.URL.Host + "/" + repo + ":" + ref, Status: resp.StatusCode,
					Code: string(d.Code), Message: d.Message}
			}
		}
	}
	return nil
}

func slicesContainsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
