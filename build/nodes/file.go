package nodes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// BuilderEntry is one entry of a builders file.
type BuilderEntry struct {
	// Platform is what ParseNodePlatform reads: linux/amd64, windows,
	// windows/amd64, ltsc2025...
	Platform string `json:"platform"`
	// Address is the daemon's address, e.g. tcp://buildkitd-amd64:1234.
	Address string `json:"address"`
	// TLS are the client TLS settings of a tcp:// address.
	TLS *BuilderTLS `json:"tls,omitempty"`
}

// BuilderTLS are a builders file entry's TLS settings. Relative paths are
// relative to the builders file.
type BuilderTLS struct {
	// CA is the CA bundle that signs the daemon's certificate.
	CA string `json:"ca,omitempty"`
	// Cert is the client certificate.
	Cert string `json:"cert,omitempty"`
	// Key is the client certificate's key.
	Key string `json:"key,omitempty"`
	// ServerName overrides the name checked in the daemon's certificate.
	ServerName string `json:"server_name,omitempty"`
}

// LoadBuilders reads a builders file (YAML or JSON): a list of
// {platform, address, tls: {ca, cert, key, server_name}}. Unknown keys are
// errors, so that a misspelt tls key does not silently drop TLS.
func LoadBuilders(path string) ([]Node, error) {
	dt, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: reading builders file: %w", ErrInvalidNode, err)
	}
	return ParseBuilders(dt, path)
}

// ParseBuilders reads the content of the builders file at path; path names
// the file in errors and is where relative TLS paths start.
func ParseBuilders(dt []byte, path string) ([]Node, error) {
	var entries []BuilderEntry
	if err := yaml.UnmarshalStrict(dt, &entries); err != nil {
		return nil, fmt.Errorf("%w: builders file %s: %w", ErrInvalidNode, path, err)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%w: builders file %s lists no builders", ErrInvalidNode, path)
	}
	dir := filepath.Dir(path)
	nodes := make([]Node, 0, len(entries))
	for i, e := range entries {
		p, err := ParseNodePlatform(e.Platform)
		if err != nil {
			return nil, fmt.Errorf("builders file %s, entry %d: %w", path, i+1, err)
		}
		addr := strings.TrimSpace(e.Address)
		if addr == "" {
			return nil, fmt.Errorf("%w: builders file %s, entry %d (%s): no address", ErrInvalidNode, path, i+1, e.Platform)
		}
		b := Builder{Addr: addr, Source: SourceBuildersFile + " " + path}
		if e.TLS != nil {
			b.TLS = TLSOptions{
				CACert: relTo(dir, e.TLS.CA), Cert: relTo(dir, e.TLS.Cert), Key: relTo(dir, e.TLS.Key),
				ServerName: e.TLS.ServerName,
			}
		}
		if err := b.Validate(); err != nil {
			return nil, fmt.Errorf("builders file %s, entry %d: %w", path, i+1, err)
		}
		nodes = append(nodes, Node{Platform: p, Builder: b})
	}
	return nodes, nil
}

func relTo(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
