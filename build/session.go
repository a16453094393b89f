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
