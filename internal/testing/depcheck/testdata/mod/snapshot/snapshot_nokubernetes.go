//go:build nokubernetes

package snapshot

import "example.com/x"

// Client links the network through a third-party package.
var Client = x.Client
