package buildx

// The drivers an instance may use register their factories with buildx's
// driver package; builder.LoadNodes finds them there by name.
import (
	_ "github.com/docker/buildx/driver/docker-container"
	_ "github.com/docker/buildx/driver/remote"
)
