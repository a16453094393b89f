//go:build nokubernetes

package buildx

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/docker/buildx/store"
)

// TestLoadKubernetesLeftOut: built with -tags nokubernetes, a kubernetes
// instance is refused by name, before anything is contacted.
func TestLoadKubernetesLeftOut(t *testing.T) {
	newStore(t, &store.NodeGroup{Name: "kube", Driver: "kubernetes", Nodes: []store.Node{{Name: "kube0", Endpoint: "kubernetes:///kube?deployment=kube0"}}})
	_, err := Load(context.Background(), "kube")
	if !errors.Is(err, ErrUnsupportedDriver) || !strings.Contains(err.Error(), `"kubernetes"`) || strings.Contains(err.Error(), "kubernetes)") {
		t.Errorf("err = %v, want ErrUnsupportedDriver for kubernetes", err)
	}
}
