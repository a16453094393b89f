package bake

import (
	"errors"
	"fmt"
	"maps"

	"github.com/docker/buildx/util/buildflags"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/session/secrets/secretsprovider"
	"github.com/moby/buildkit/session/sshforward/sshprovider"
)

// The --secret, --ssh, --cache-from and --cache-to syntax of docker buildx
// build, read with buildx's own util/buildflags, and the one conversion of
// what it reads into BuildKit's types. A bake target's secret, ssh,
// cache-from and cache-to entries (which buildx's bake package reads with
// the same buildflags parsers) and imgctl build's flags both go through
// the conversions here, so the two verbs take the same strings.

// errEmptyFlag is an empty value, which buildflags skips.
var errEmptyFlag = errors.New("empty value")

// ParseSecret reads one --secret value as docker buildx build does:
// id=ID[,src=PATH|,env=VAR], with type=file or type=env and source= as an
// alias of src=. With neither src nor env, BuildKit reads the variable ID
// when it is set, else the file ID.
func ParseSecret(s string) (secretsprovider.Source, error) {
	in, err := buildflags.ParseSecretSpecs([]string{s})
	if err != nil {
		return secretsprovider.Source{}, err
	}
	if len(in) == 0 {
		return secretsprovider.Source{}, errEmptyFlag
	}
	return secret(in[0])
}

// ParseSSH reads one --ssh value as docker buildx build does: default, ID,
// or ID=PATH[,PATH], where a PATH is an agent socket or a key file. No
// paths means $SSH_AUTH_SOCK; no ID (=PATH) means BuildKit's "default".
func ParseSSH(s string) (sshprovider.AgentConfig, error) {
	in, err := buildflags.ParseSSHSpecs([]string{s})
	if err != nil {
		return sshprovider.AgentConfig{}, err
	}
	if len(in) == 0 {
		return sshprovider.AgentConfig{}, errEmptyFlag
	}
	return ssh(in)[0], nil
}

// ParseCache reads one --cache-from or --cache-to value as docker buildx
// build does: type=TYPE,KEY=VALUE,..., or bare references (a CSV list of
// them), each meaning type=registry,ref=REFERENCE.
func ParseCache(s string) ([]client.CacheOptionsEntry, error) {
	in, err := buildflags.ParseCacheEntry([]string{s})
	if err != nil {
		return nil, err
	}
	if len(in) == 0 {
		return nil, errEmptyFlag
	}
	var out []client.CacheOptionsEntry
	for _, c := range in {
		e, err := cache(c)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// errNoSecretID is a secret without an id. BuildKit's store would refuse
// it when the build starts ("secret missing ID"); imgctl refuses it before
// any build.
var errNoSecretID = errors.New("id is required")

// errCacheEmptyKey is a cache attribute without a key (type=registry,=x),
// which buildflags keeps and which names nothing.
var errCacheEmptyKey = errors.New("an attribute has no key")

// secret converts one of buildx's secrets into BuildKit's source.
func secret(s *buildflags.Secret) (secretsprovider.Source, error) {
	if s.ID == "" {
		return secretsprovider.Source{}, errNoSecretID
	}
	return secretsprovider.Source{ID: s.ID, FilePath: s.FilePath, Env: s.Env}, nil
}

// secrets converts a target's secrets; an error names the entry.
func secrets(in buildflags.Secrets) ([]secretsprovider.Source, error) {
	var out []secretsprovider.Source
	for _, s := range in {
		src, err := secret(s)
		if err != nil {
			return nil, fmt.Errorf("secret %q: %w", s.String(), err)
		}
		out = append(out, src)
	}
	return out, nil
}

// ssh converts buildx's ssh entries into BuildKit's agent configs.
func ssh(in []*buildflags.SSH) []sshprovider.AgentConfig {
	var out []sshprovider.AgentConfig
	for _, s := range in {
		out = append(out, sshprovider.AgentConfig{ID: s.ID, Paths: s.Paths})
	}
	return out
}

// caches converts buildx's cache entries into BuildKit's; an error names
// the entry.
func caches(in buildflags.CacheOptions) ([]client.CacheOptionsEntry, error) {
	var out []client.CacheOptionsEntry
	for _, c := range in {
		e, err := cache(c)
		if err != nil {
			return nil, fmt.Errorf("cache %q: %w", c.String(), err)
		}
		out = append(out, e)
	}
	return out, nil
}

// cache converts one of buildx's cache entries into BuildKit's.
func cache(c *buildflags.CacheOptionsEntry) (client.CacheOptionsEntry, error) {
	if _, ok := c.Attrs[""]; ok {
		return client.CacheOptionsEntry{}, errCacheEmptyKey
	}
	return client.CacheOptionsEntry{Type: c.Type, Attrs: maps.Clone(c.Attrs)}, nil
}
