package lint

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps pins the architecture: lint reads a Dockerfile and nothing else,
// so neither the BuildKit driver nor any registry or network code may be
// among its dependencies, direct or not.
func TestDeps(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{
		"github.com/imgctl/imgctl/build",
		"github.com/imgctl/imgctl/index",
		"github.com/imgctl/imgctl/internal/regclient",
		"github.com/imgctl/imgctl/internal/regtest",
		"github.com/google/go-containerregistry/pkg/v1/remote",
		"github.com/moby/buildkit/client",
		"net/http",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("lint depends on %s", dep)
			}
		}
	}
}
