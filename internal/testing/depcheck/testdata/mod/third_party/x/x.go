// Package x is a third-party package that links the network.
package x

import "net/http"

// Client is a third party's HTTP client.
var Client = http.DefaultClient
