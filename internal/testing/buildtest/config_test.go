package buildtest

import (
	"strings"
	"testing"

	"github.com/moby/buildkit/cmd/buildkitd/config"
)

// TestConfigTOML: buildkitd's own config loader reads the mirrors and the
// plain-HTTP registries back from what configTOML writes, and a trace socket
// of the daemon's own.
func TestConfigTOML(t *testing.T) {
	s := configTOML("/tmp/root", "/usr/sbin/runc", Options{
		InsecureRegistries: []string{"127.0.0.1:5000"},
		Mirrors:            map[string][]string{"mcr.example.invalid": {"127.0.0.1:5000"}, "docker.io": {"127.0.0.1:5000", "mirror.example"}},
	})
	cfg, err := config.Load(strings.NewReader(s))
	if err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	local := cfg.Registries["127.0.0.1:5000"]
	if local.PlainHTTP == nil || !*local.PlainHTTP || local.Insecure == nil || !*local.Insecure || len(local.Mirrors) != 0 {
		t.Errorf("127.0.0.1:5000: %+v", local)
	}
	if m := cfg.Registries["mcr.example.invalid"].Mirrors; len(m) != 1 || m[0] != "127.0.0.1:5000" {
		t.Errorf("mcr.example.invalid mirrors %v", m)
	}
	if m := cfg.Registries["docker.io"].Mirrors; len(m) != 2 || m[1] != "mirror.example" {
		t.Errorf("docker.io mirrors %v", m)
	}
	if got, want := cfg.OTEL.SocketPath, "/tmp/root/otel-grpc.sock"; got != want {
		t.Errorf("otel socket %q, want %q", got, want)
	}
	if h := cfg.Registries["docker.io"].PlainHTTP; h != nil {
		t.Errorf("docker.io plain HTTP %v", *h)
	}
}
