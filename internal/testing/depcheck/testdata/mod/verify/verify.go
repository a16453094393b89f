// Package verify links a registry client, which its row bans.
package verify

import "github.com/google/go-containerregistry/pkg/v1/remote"

// Options are remote options verify should never hold.
var Options []remote.Option
