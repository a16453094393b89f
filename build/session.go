package build

import (
	"fmt"
	"io"
	"strings"

	"github.com/docker/cli/cli/config"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/session"
	"github.com/moby/buildkit/session/auth/authprovider"
	"github.com/moby/buildkit/session/secrets/secretsprovider"
	"github.com/moby/buildkit/session/sshforward/sshprovider"
)

// ParseSecret reads a --secret value: id=ID[,src=PATH|,env=VAR] (type=file
// or type=env may be given; source= is an alias of src=). With neither src
// nor env, BuildKit reads the variable ID when it is set, else the file ID.
func ParseSecret(s string) (secretsprovider.Source, error) {
	var src secretsprovider.Source
	typ := ""
	for _, field := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(field), "=")
		if !ok {
			return src, fmt.Errorf("%w: --secret %q: %q is not key=value", ErrInvalidOptions, s, field)
		}
		switch strings.ToLower(k) {
		case "id":
			src.ID = v
		case "src", "source":
			src.FilePath = v
		case "env":
			src.Env = v
		case "type":
			typ = v
		default:
			return src, fmt.Errorf("%w: --secret %q: unknown key %q", ErrInvalidOptions, s, k)
		}
	}
	if src.ID == "" {
		return src, fmt.Errorf("%w: --secret %q: id is required", ErrInvalidOptions, s)
	}
	switch {
	case typ == "env" && src.Env == "":
		src.Env, src.FilePath = src.FilePath, ""
		if src.Env == "" {
			src.Env = src.ID
		}
	case typ != "" && typ != "file" && typ != "env":
		return src, fmt.Errorf("%w: --secret %q: type must be file or env", ErrInvalidOptions, s)
	}
	return src, nil
}

// ParseSSH reads an --ssh value: default, ID, or ID=PATH[,PATH] where a
// PATH is an agent socket or a key file. An empty path list means
// $SSH_AUTH_SOCK.
func ParseSSH(s string) (sshprovider.AgentConfig, error) {
	id, paths, _ := strings.Cut(strings.TrimSpace(s), "=")
	if id == "" {
		return sshprovider.AgentConfig{}, fmt.Errorf("%w: --ssh %q: want ID[=PATH,...]", ErrInvalidOptions, s)
	}
	c := sshprovider.AgentConfig{ID: id}
	if paths != "" {
		c.Paths = strings.Split(paths, ",")
	}
	return c, nil
}

// ParseCache reads a --cache-from or --cache-to value: type=TYPE,KEY=VALUE,...
// or a bare reference, which means type=registry,ref=REFERENCE.
func ParseCache(s string) (client.CacheOptionsEntry, error) {
	e := client.CacheOptionsEntry{Attrs: map[string]string{}}
	if !strings.Contains(s, "=") {
		e.Type, e.Attrs["ref"] = "registry", strings.TrimSpace(s)
		return e, nil
	}
	for _, field := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(field), "=")
		if !ok || k == "" {
			return e, fmt.Errorf("%w: cache %q: %q is not key=value", ErrInvalidOptions, s, field)
		}
		if k == "type" {
			e.Type = v
		} else {
			e.Attrs[k] = v
		}
	}
	if e.Type == "" {
		return e, fmt.Errorf("%w: cache %q: type is required", ErrInvalidOptions, s)
	}
	return e, nil
}

// cacheForVariant gives each variant its own registry cache reference when
// a build has several variants, so that their exports do not overwrite
// each other: REPO:TAG becomes REPO:TAG-VARIANT (REPO:VARIANT without a tag).
func cacheForVariant(entries []client.CacheOptionsEntry, variant string, several bool) []client.CacheOptionsEntry {
	out := make([]client.CacheOptionsEntry, 0, len(entries))
	for _, e := range entries {
		attrs := make(map[string]string, len(e.Attrs))
		for k, v := range e.Attrs {
			attrs[k] = v
		}
		if ref := attrs["ref"]; several && e.Type == "registry" && ref != "" && !strings.Contains(ref, "@") {
			slash := strings.LastIndex(ref, "/")
			if colon := strings.LastIndex(ref, ":"); colon > slash {
				attrs["ref"] = ref + "-" + variant
			} else {
				attrs["ref"] = ref + ":" + variant
			}
		}
		out = append(out, client.CacheOptionsEntry{Type: e.Type, Attrs: attrs})
	}
	return out
}

// attachables returns the session providers of a build: registry auth from
// the Docker config (and its credential helpers), secrets and SSH agents.
func attachables(secrets []secretsprovider.Source, ssh []sshprovider.AgentConfig, stderr io.Writer) ([]session.Attachable, error) {
	if stderr == nil {
		stderr = io.Discard
	}
	cfg := config.LoadDefaultConfigFile(stderr)
	out := []session.Attachable{authprovider.NewDockerAuthProvider(authprovider.DockerAuthProviderConfig{
		AuthConfigProvider: authprovider.LoadAuthConfig(cfg),
	})}
	if len(secrets) > 0 {
		store, err := secretsprovider.NewStore(secrets)
		if err != nil {
			return nil, fmt.Errorf("%w: secrets: %w", ErrInvalidOptions, err)
		}
		out = append(out, secretsprovider.NewSecretProvider(store))
	}
	if len(ssh) > 0 {
		p, err := sshprovider.NewSSHAgentProvider(ssh)
		if err != nil {
			return nil, fmt.Errorf("%w: ssh: %w", ErrInvalidOptions, err)
		}
		out = append(out, p)
	}
	return out, nil
}
