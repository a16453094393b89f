// Command registry is the CNCF distribution registry as imgctl's tests run
// it: distribution's own registry command (registry.RootCmd, `registry
// serve config.yml`), with the storage drivers and auth the tests use
// (filesystem, inmemory, htpasswd, token) instead of upstream's
// cmd/registry, which also links the Azure, GCS and S3 drivers and their
// cloud SDKs and makes a cold CI build several minutes longer.
package main

import (
	"os"

	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/auth/token"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

func main() {
	if err := registry.RootCmd.Execute(); err != nil {
		os.Exit(1)
	}
}
